package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/directory"
	"github.com/perfagent/subagent/mib/schema"
	"github.com/perfagent/subagent/notiflog"
	"github.com/perfagent/subagent/traps"
	"github.com/perfagent/subagent/usm"
)

// treeChanged goes out at once for the first change, then at most once
// per interval covering every generation since the last one: a context
// that came and went in between is named twice, and what 255 octets
// cannot hold is counted; an interval of 0 sends none.
func TestTreeChangedRateLimited(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := asn1tree.OID{1, 3, 6, 1, 4, 1, 32473, 1}
		notes, err := notiflog.Open("", 0, 0, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		sender, err := traps.NewReporting(nil, usm.Engine{}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer sender.Close()
		hs := &hotsets{notes: notes, log: slog.New(slog.DiscardHandler), base: base, start: time.Now(), sender: sender,
			tree: newTreeNotes(10 * time.Second)}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go hs.tree.run(ctx, hs)

		// sent is what the log holds: generation, contexts, first
		// generation and count of each entry.
		sent := func() [][4]string {
			var out [][4]string
			for _, e := range notes.View().Entries {
				if !e.OID.Equal(schema.TreeChanged.OID(base)) || len(e.Vars) != 4 {
					t.Fatalf("logged %v with %d VarBinds, want treeChanged with 4", e.OID, len(e.Vars))
				}
				var v [4]string
				for i := range v {
					v[i] = notiflog.Format(e.Vars[i].Value())
				}
				out = append(out, v)
			}
			return out
		}
		check := func(what string, want ...[4]string) {
			t.Helper()
			synctest.Wait()
			got := sent()
			if len(got) != len(want) {
				t.Fatalf("%s: sent %v, want %v", what, got, want)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("%s: notification %d is %v, want %v", what, i+1, got[i], want[i])
				}
			}
		}
		first := [4]string{"2", "+A/ +B/", "2", "2"}
		hs.tree.changed(directory.Change{Generation: 2, Added: []string{"A/", "B/"}})
		check("the first change", first)

		hs.tree.changed(directory.Change{Generation: 3, Removed: []string{"A/"}})
		hs.tree.changed(directory.Change{Generation: 4, Added: []string{"C/"}})
		hs.tree.changed(directory.Change{Generation: 5, Removed: []string{"C/"}})
		time.Sleep(9 * time.Second)
		check("within the interval", first)
		time.Sleep(time.Second)
		second := [4]string{"5", "-A/ +C/ -C/", "3", "3"}
		check("after the interval", first, second)

		// 40 suppliers' contexts: the list is cut, the count and the
		// generations say how many.
		var want strings.Builder
		for i := range 40 {
			p := fmt.Sprintf("DDS/Vendor%02d/", i)
			hs.tree.changed(directory.Change{Generation: uint32(6 + i), Added: []string{p}})
			if want.Len()+len(p)+2 <= 255-4 {
				if want.Len() > 0 {
					want.WriteByte(' ')
				}
				want.WriteString("+" + p)
			}
		}
		time.Sleep(10 * time.Second)
		third := [4]string{"45", want.String() + " ...", "6", "40"}
		check("40 changes", first, second, third)
		if n := len(third[1]); n > 255 {
			t.Errorf("treeContexts has %d octets, more than a DisplayString", n)
		}

		hs.tree.interval.Store(0)
		time.Sleep(time.Minute)
		hs.tree.changed(directory.Change{Generation: 46, Added: []string{"D/"}})
		time.Sleep(time.Minute)
		check("with an interval of 0", first, second, third)
	})
}

// The tree notes' run returns only after the directory's Watch did (its
// last write of the generation's file), so a stop leaves no temporary
// file behind.
func TestTreeRunWaitsForWatch(t *testing.T) {
	tn := newTreeNotes(0)
	release, watched := make(chan struct{}), make(chan struct{})
	tn.watch = func(ctx context.Context) {
		<-ctx.Done()
		<-release
		close(watched)
	}
	ctx, cancel := context.WithCancel(context.Background())
	returned := make(chan struct{})
	go func() { tn.run(ctx, &hotsets{}); close(returned) }()
	cancel()
	select {
	case <-returned:
		t.Fatal("run returned while Watch was still writing")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return after Watch did")
	}
	select {
	case <-watched:
	default:
		t.Fatal("run returned before Watch")
	}
}
