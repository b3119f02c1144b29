package notiflog

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perfagent/subagent/client/trustdir"
)

// A notification costs about its own size on disk, compactions included,
// with the longest log full: notifications arrive 100 per CommitDelay
// (1,000 a second), each with four outcome changes.
func TestBytesPerNotification(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		file := filepath.Join(t.TempDir(), File)
		l, err := Open(file, MaxEntries, 0, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		run := func(from, n int) {
			for i := from; i < from+n; i++ {
				addHotset(l, i)
				if i%100 == 99 {
					time.Sleep(CommitDelay)
					synctest.Wait()
				}
			}
		}
		run(0, MaxEntries)
		v0 := l.View()
		const n = 20000
		run(MaxEntries, n)
		v := l.View()
		fi, err := os.Stat(file)
		if err != nil {
			t.Fatal(err)
		}
		per := (v.Stats.Written - v0.Stats.Written) / n
		t.Logf("%d notifications, log full: %d bytes each written, %d compactions, %d batches; journal %d bytes",
			n, per, v.Stats.Compactions-v0.Stats.Compactions, v.Stats.Batches-v0.Stats.Batches, fi.Size())
		if per >= 4096 || v.Stats.Compactions == v0.Stats.Compactions || v.Stats.Overflows != 0 || fi.Size() > trustdir.MaxFileSize {
			t.Errorf("%d bytes per notification (want < 4096), %d compactions (want some), %d overflows (want 0), journal %d bytes",
				per, v.Stats.Compactions-v0.Stats.Compactions, v.Stats.Overflows, fi.Size())
		}
		if len(v.Entries) != MaxEntries {
			t.Errorf("%d entries, want %d", len(v.Entries), MaxEntries)
		}
	})
}

// BenchmarkAdd is one hotset notification added to a full log, as the
// journal does it ("journal": the caller's cost; the writer's bytes as
// disk-B/op) and as earlier versions did ("rewrite": the whole log
// encoded and written with trustdir.WriteFile, as their Add did).
func BenchmarkAdd(b *testing.B) {
	for _, n := range []int{DefaultMaxEntries, MaxEntries} {
		for _, how := range []string{"rewrite", "journal"} {
			b.Run(fmt.Sprintf("entries=%d/%s", n, how), func(b *testing.B) {
				dir := b.TempDir()
				file := filepath.Join(dir, File)
				if how == "rewrite" {
					file = ""
				}
				l, err := Open(file, n, 0, nil, nil)
				if err != nil {
					b.Fatal(err)
				}
				for i := range n {
					addHotset(l, i)
				}
				if how == "journal" { // full, and all written
					l.Close()
					if l, err = Open(file, n, 0, nil, nil); err != nil {
						b.Fatal(err)
					}
				}
				vals, oids := hotsetNote(n)
				oid := hotsetBase.Append(0, 21)
				w0 := l.View().Stats.Written
				var rewritten int
				for b.Loop() {
					l.Add(time.Second, oid, vals, oids)
					if how == "rewrite" {
						rewritten += rewrite(b, l, filepath.Join(dir, LegacyFile))
					}
				}
				b.StopTimer()
				l.Close()
				disk := float64(l.View().Stats.Written-w0) + float64(rewritten)
				b.ReportMetric(disk/float64(b.N), "disk-B/op")
			})
		}
	}
}

// rewrite saves l as earlier versions did after every change.
func rewrite(b *testing.B, l *Log, file string) int {
	l.mu.Lock()
	data, err := json.Marshal(saved{Next: l.next, Entries: l.entries})
	l.mu.Unlock()
	if err == nil {
		err = trustdir.WriteFile(file, data, 0o600)
	}
	if err != nil {
		b.Fatal(err)
	}
	return len(data)
}
