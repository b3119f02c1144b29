package notiflog

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/perfagent/subagent/asn1tree"
)

const crashEnv = "NOTIFLOG_CRASH_CHILD"

// crashChild adds notifications to the log in dir until it is killed,
// printing each index once Add returned. Each entry's value is its
// index, and its outcome says it too. Batches are small and compactions
// frequent, so that a kill finds the writer in either.
func crashChild(dir string) {
	commitDelay, compactFloor = time.Millisecond, 2<<10
	l, err := Open(filepath.Join(dir, File), 40, 0, nil, nil)
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(1)
	}
	for {
		l.mu.Lock()
		next := l.next
		l.mu.Unlock()
		idx := l.Add(time.Second, trapOID, []asn1tree.Value{asn1tree.Str(strconv.FormatUint(uint64(next), 10))}, []asn1tree.OID{{1, 3, 6, 1, 4, 1, 32473, 1, 14, 0, 1, 0}})
		l.Outcome(idx, "master", true, "sent "+strconv.FormatUint(uint64(idx), 10))
		fmt.Println(idx)
		time.Sleep(100 * time.Microsecond) // a busy daemon, not a tight loop: kills land among batches
	}
}

// A daemon killed (SIGKILL) at random moments, 30 times, in batches and
// in compactions: every reopen succeeds, the entries are in order
// with the content they were added with, no index handed out before a
// kill is handed out again, and no temporary file is left.
func TestCrashLeavesAPrefix(t *testing.T) {
	if dir := os.Getenv(crashEnv); dir != "" {
		crashChild(dir)
		return
	}
	dir := t.TempDir()
	file := filepath.Join(dir, File)
	var last, printed uint32
	torn := 0
	for run := range 30 {
		// A temporary file of a compaction a crash interrupted (whether
		// or not a kill left one) goes at the next Open.
		os.WriteFile(filepath.Join(dir, fmt.Sprintf(".%s.tmp-%016x", File, run)), []byte("x"), 0o600)
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashLeavesAPrefix$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashEnv+"="+dir)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string)
		go func() {
			defer close(lines)
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				lines <- sc.Text()
			}
		}()
		want := 1 + rand.IntN(300)
		for n := 0; n < want; n++ {
			select {
			case s, ok := <-lines:
				if !ok {
					t.Fatalf("run %d: the child ended after %d lines: %v", run, n, cmd.Wait())
				}
				idx, err := strconv.ParseUint(s, 10, 32)
				if err != nil {
					t.Fatalf("run %d: the child says %q", run, s)
				}
				if n == 0 && uint32(idx) <= printed {
					t.Fatalf("run %d: first index %d, not after %d, the last one the killed daemon handed out", run, idx, printed)
				}
				printed = uint32(idx)
			case <-time.After(20 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("run %d: no index from the child within 20s", run)
			}
		}
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		for s := range lines { // what it added before it died
			if idx, err := strconv.ParseUint(s, 10, 32); err == nil {
				printed = uint32(idx)
			}
		}
		cmd.Wait()

		l, err := Open(file, 40, 0, nil, nil)
		if err != nil {
			t.Fatalf("run %d: reopen after SIGKILL: %v", run, err)
		}
		v := l.View()
		l.Close()
		if v.Stats.TornBytes > 0 {
			torn++
		}
		for i, e := range v.Entries {
			if i > 0 && e.Index <= v.Entries[i-1].Index { // a crash skips the indexes its lost batch handed out
				t.Fatalf("run %d: entry %d follows %d", run, e.Index, v.Entries[i-1].Index)
			}
			if got := e.Vars[0].Value().Str; got != strconv.FormatUint(uint64(e.Index), 10) {
				t.Fatalf("run %d: entry %d holds %q", run, e.Index, got)
			}
			if o := Outcomes(&e); o != "" && o != fmt.Sprintf("master: sent %d", e.Index) {
				t.Fatalf("run %d: entry %d has outcomes %q", run, e.Index, o)
			}
		}
		if n := len(v.Entries); n > 0 {
			end := v.Entries[n-1].Index
			if end < last || end > printed {
				t.Fatalf("run %d: the log ends at %d; it ended at %d before, the child added up to %d", run, end, last, printed)
			}
			last = end
		}
		if v.Next <= printed { // a manager may have read an index the crash lost
			t.Fatalf("run %d: next index %d, not after %d, handed out before the kill", run, v.Next, printed)
		}
		if testing.Verbose() {
			t.Logf("run %d: %d added, kept %d entries up to %d, %d bytes torn", run, printed, len(v.Entries), last, v.Stats.TornBytes)
		}
		des, _ := os.ReadDir(dir)
		if len(des) != 1 || des[0].Name() != File {
			t.Fatalf("run %d: the directory holds %v, want %s alone", run, des, File)
		}
	}
	t.Logf("30 kills: the log ends at %d of %d added, %d reopens dropped a torn tail", last, printed, torn)
	if last == 0 {
		t.Error("nothing was ever kept")
	}
}
