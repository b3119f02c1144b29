package daemon

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perfagent/subagent/agentx"
	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/config"
	"github.com/perfagent/subagent/spmi"
)

// At a cap of 50 names, a manager creating and destroying hotset rows
// with fresh names gets resourceUnavailable once the cap is reached (never
// noError for a row left out of the tree), the configured hotsets stay
// served, and a configured hotset added at the top of the list by a
// reload is a reload error naming it, hiding nothing. After the grace
// period the names are released: numbering.json and the tree are back to
// their size, and rows can be created again. The clock is synctest's.
func TestNameCapAndGraceHotsets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := fixtureConfig(t)
		c.State.MaxNamesPerContext, c.State.NameGrace = 50, 10*time.Minute
		c.Hotset.MaxSNMPRows = 10000
		c.Hotsets = []config.HotsetConf{
			{Name: "conf1", Stat: "Disk/*/busy", FeedType: "always", ExcpType: "none"},
			{Name: "conf2", Stat: "Disk/*/busy", FeedType: "always", ExcpType: "none"},
		}
		d, err := New(c, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		w := d.WritableTables()
		start := d.h.Refresh()
		startBytes := testutil.FileSize(t, d.num.File())
		served := func(s *spmi.Snapshot, names ...string) {
			t.Helper()
			for _, n := range names {
				if _, err := s.Lookup("Hotset/" + n + "/stat"); err != nil {
					t.Errorf("hotset %s not served: %v", n, err)
				}
			}
		}
		created, refused := 0, 0
		for i := range 100 {
			name := fmt.Sprint("fresh", i)
			serr := set(t, w, volatileHotset(c.Base, name))
			if serr != nil {
				if serr.Code != agentx.ResourceUnavailable || !strings.Contains(serr.Error(), "state.max_names_per_context") {
					t.Fatalf("row %s at the cap: %v, want resourceUnavailable naming the setting", name, serr)
				}
				refused++
				continue
			}
			created++
			time.Sleep(time.Second) // a refresh at the same instant reuses the parts
			if _, err := d.h.Refresh().Lookup("Hotset/" + name + "/stat"); err != nil {
				t.Fatalf("row %s answered noError but is not served: %v", name, err)
			}
			if serr := set(t, w, destroyHotset(c.Base, name)); serr != nil {
				t.Fatalf("destroy %s: %v", name, serr)
			}
		}
		atCap := testutil.FileSize(t, d.num.File())
		if created != 48 || refused != 52 {
			t.Errorf("%d rows created, %d refused; want 48 (50 names, 2 configured), 52", created, refused)
		}
		time.Sleep(time.Second)
		served(d.h.Refresh(), "conf1", "conf2")

		// A configured hotset added at the top: the reload says which.
		c2 := *c
		c2.Hotsets = append([]config.HotsetConf{{Name: "atop", Stat: "Disk/*/busy", FeedType: "always", ExcpType: "none"}}, c.Hotsets...)
		if err := d.Reload(&c2); err == nil || !strings.Contains(err.Error(), "Hotset/atop") {
			t.Errorf("reload with a hotset beyond the cap: %v, want an error naming it", err)
		}
		time.Sleep(time.Second)
		served(d.h.Refresh(), "conf1", "conf2")
		if rows, defs := activeRows(d), engineDefs(d); !slices.Equal(rows, []string{"conf1", "conf2"}) || !slices.Equal(defs, rows) {
			t.Errorf("rows %v, engine %v, want conf1 conf2", rows, defs)
		}

		// The grace period passes (the daemon refreshes all the time).
		var end *spmi.Snapshot
		for range 12 {
			time.Sleep(time.Minute)
			end = d.h.Refresh()
		}
		if n := len(d.num.Names("Hotset")); n != 2 {
			t.Errorf("Hotset numbers %d names after the grace period, want the 2 configured", n)
		}
		b := testutil.FileSize(t, d.num.File())
		t.Logf("numbering.json: %d bytes at the start, %d at the cap (%d rows created, %d refused), %d after the grace period", startBytes, atCap, created, refused, b)
		if b != startBytes {
			t.Errorf("numbering.json is %d bytes after the grace period, %d at the start", b, startBytes)
		}
		if a, b := hotsetNames(t, start), hotsetNames(t, end); !slices.Equal(a, b) {
			t.Errorf("Hotset serves %v after the churn, %v before", b, a)
		}
		if err := d.Reload(&c2); err != nil {
			t.Errorf("reload adding atop once names were released: %v", err)
		}
		if serr := set(t, w, volatileHotset(c.Base, "again")); serr != nil {
			t.Errorf("a row once names were released: %v", serr)
		}
		time.Sleep(time.Second)
		served(d.h.Refresh(), "atop", "conf1", "conf2", "again")
	})
}

// hotsetNames are the hotsets s serves.
func hotsetNames(t *testing.T, s *spmi.Snapshot) []string {
	t.Helper()
	top, err := s.Lookup("Hotset/")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range top.Children {
		if !n.IsStat() {
			out = append(out, n.Name)
		}
	}
	slices.Sort(out)
	return out
}

// Configured hotsets beyond the cap stop the start with an error naming
// the first that cannot be numbered.
func TestNameCapConfiguredHotsetsAtStart(t *testing.T) {
	c := fixtureConfig(t)
	c.State.MaxNamesPerContext = 1
	c.Hotsets = []config.HotsetConf{
		{Name: "conf1", Stat: "Disk/*/busy", FeedType: "always", ExcpType: "none"},
		{Name: "conf2", Stat: "Disk/*/busy", FeedType: "always", ExcpType: "none"},
	}
	_, err := New(c, slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), "Hotset/conf2") || !strings.Contains(err.Error(), "state.max_names_per_context") {
		t.Fatalf("start with 2 hotsets and a cap of 1: %v, want an error naming conf2 and the setting", err)
	}
}
