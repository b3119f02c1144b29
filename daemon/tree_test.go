package daemon

import (
	"context"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/directory"
	"github.com/perfagent/subagent/mib"
	"github.com/perfagent/subagent/notiflog"
	"github.com/perfagent/subagent/traps"
	"github.com/perfagent/subagent/usm"
)

// treeChanged goes out at once for the first change, then at most once
// per interval with what changed since the last one (a context that came
// and went in between is not named); an interval of 0 sends none.
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

		// sent is what the log holds: generation and contexts of each entry.
		sent := func() [][2]string {
			var out [][2]string
			for _, e := range notes.View().Entries {
				if !e.OID.Equal(mib.TreeChanged.OID(base)) || len(e.Vars) != 2 {
					t.Fatalf("logged %v with %d VarBinds, want treeChanged with 2", e.OID, len(e.Vars))
				}
				out = append(out, [2]string{notiflog.Format(e.Vars[0].Value()), notiflog.Format(e.Vars[1].Value())})
			}
			return out
		}
		check := func(what string, want ...[2]string) {
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
		first := [2]string{"2", "+A/ +B/"}
		hs.tree.changed(directory.Change{Generation: 2, Added: []string{"A/", "B/"}})
		check("the first change", first)

		hs.tree.changed(directory.Change{Generation: 3, Removed: []string{"A/"}})
		hs.tree.changed(directory.Change{Generation: 4, Added: []string{"C/"}})
		hs.tree.changed(directory.Change{Generation: 5, Removed: []string{"C/"}})
		time.Sleep(9 * time.Second)
		check("within the interval", first)
		time.Sleep(time.Second)
		check("after the interval", first, [2]string{"5", "-A/"})

		hs.tree.interval.Store(0)
		time.Sleep(time.Minute)
		hs.tree.changed(directory.Change{Generation: 6, Added: []string{"D/"}})
		time.Sleep(time.Minute)
		check("with an interval of 0", first, [2]string{"5", "-A/"})
	})
}
