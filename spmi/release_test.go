package spmi

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/client/testutil"
)

// churn is a provider whose Disk context holds the names it is told:
// a few that stay, and fresh ones that come and go.
type churn struct {
	mu    sync.Mutex
	names []string
}

func (c *churn) Name() string { return "Disk" }

func (c *churn) set(names ...string) {
	c.mu.Lock()
	c.names = names
	c.mu.Unlock()
}

func (c *churn) Collect(b *Builder) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	disk, err := b.Context(nil, &diskCx)
	if err != nil {
		return err
	}
	if err := b.Stat(disk, &busy, spmiwire.Float(1)); err != nil {
		return err
	}
	for _, name := range c.names {
		cx, err := b.Instance(disk, &diskCx, name, "", 0)
		if b.Unnumbered("Disk numbering", err) {
			continue
		}
		if err != nil {
			return err
		}
		if err := b.Stat(cx, &busy, spmiwire.Float(2)); err != nil {
			return err
		}
	}
	return nil
}

// Fresh names churning through a context leave the numbering and the
// served tree as they started once the grace period has passed, while a
// name that returns within its grace keeps its number, and the names
// that stayed keep theirs. The clock is synctest's.
func TestNumberingChurnReturnsToStartAfterGrace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "numbering.json")
		num := NewNumbering(file)
		num.SetGrace(10 * time.Minute)
		p := &churn{}
		p.set("sda", "sdb")
		h := NewHierarchy(Config{Base: testBase, Numbering: num})
		h.Add(p)
		start := h.Refresh()
		startBytes := testutil.FileSize(t, file)
		startOIDs := start.ViewLen()
		sdb, _ := num.Lookup("Disk", "sdb")

		// Ten minutes of fresh names, one a second, two at a time in the tree.
		for i := 0; i < 600; i++ {
			p.set("sda", "sdb", fmt.Sprint("tmp", i), fmt.Sprint("tmp", i+1))
			h.Refresh()
			time.Sleep(time.Second)
		}
		grown := testutil.FileSize(t, file)
		if len(num.Names("Disk")) <= 3 || grown <= startBytes {
			t.Fatalf("during the churn: %d names, %d bytes (start %d): the grace period kept nothing", len(num.Names("Disk")), grown, startBytes)
		}
		// tmp10, gone for 9m50s, comes back within its grace: same number.
		kept, _ := num.Lookup("Disk", "tmp10")
		p.set("sda", "sdb", "tmp10")
		h.Refresh()
		time.Sleep(time.Second)
		if k, _ := num.Lookup("Disk", "tmp10"); k != kept || k == 0 {
			t.Errorf("tmp10 back within its grace: %d, was %d", k, kept)
		}
		p.set("sda", "sdb")
		h.Refresh()
		var end *Snapshot
		for range 12 { // the daemon refreshes all the time; a sweep is at most a minute late
			time.Sleep(time.Minute)
			end = h.Refresh()
		}
		if got := num.Names("Disk"); len(got) != 2 || got["sdb"] != sdb {
			t.Errorf("after the grace period Disk numbers %v, want sda and sdb (%d) only", got, sdb)
		}
		t.Logf("numbering.json: %d bytes at the start, %d during the churn, %d after the grace period", startBytes, grown, testutil.FileSize(t, file))
		if b := testutil.FileSize(t, file); b != startBytes {
			t.Errorf("numbering.json is %d bytes after the grace period, %d at the start (%d during the churn)", b, startBytes, grown)
		}
		if n := end.ViewLen(); n != startOIDs {
			t.Errorf("the tree serves %d OIDs after the churn, %d before", n, startOIDs)
		}
		if k, ok := num.Lookup("Disk", "tmp10"); ok {
			t.Errorf("tmp10 still numbered (%d) after its grace", k)
		}
		// A released number is free again: the next new name takes the lowest.
		p.set("sda", "sdb", "sdc")
		time.Sleep(time.Second) // a refresh at the same instant reuses the part
		if s := h.Refresh(); len(s.Failures) > 0 {
			t.Fatal(s.Failures)
		}
		if k, _ := num.Lookup("Disk", "sdc"); k != 4 {
			t.Errorf("sdc got %d, want 4 (busy is 1, sda 2, sdb 3)", k)
		}
	})
}

// A name gone from the tree keeps its number for the grace period, also
// across a restart (the file says since when it is gone), and a name with
// a record (a row a manager created) or a mark (a host created by
// reference) is never released.
func TestNumberingGraceSurvivesRestart(t *testing.T) {
	file := filepath.Join(t.TempDir(), "numbering.json")
	t0 := time.Unix(1_800_000_000, 0)
	n := NewNumbering(file)
	n.SetGrace(time.Hour)
	for _, name := range []string{"a", "b", "row"} {
		if _, err := n.Assign("X", name, nil); err != nil {
			t.Fatal(err)
		}
	}
	n.SetRecord("X", "row", `{"stat":"CPU/*/idle"}`)
	n.Assign("X", "host", nil)
	n.Mark("X", "referenced", "host", true)
	n.Sweep(map[string]map[string]bool{"X": {"a": true}}, t0) // b gone from t0
	if err := n.Save(); err != nil {
		t.Fatal(err)
	}
	r, err := LoadNumbering(file)
	if err != nil {
		t.Fatal(err)
	}
	r.SetGrace(time.Hour)
	if got := r.Sweep(map[string]map[string]bool{"X": {"a": true}}, t0.Add(59*time.Minute)); got != 0 {
		t.Errorf("released %d within the grace period", got)
	}
	if got := r.Sweep(map[string]map[string]bool{"X": {"a": true}}, t0.Add(time.Hour)); got != 1 {
		t.Errorf("released %d at the end of b's grace period (started before the restart), want 1", got)
	}
	if _, ok := r.Lookup("X", "b"); ok {
		t.Error("b still numbered")
	}
	if _, ok := r.Lookup("X", "row"); !ok {
		t.Error("the row with a record was released")
	}
	if _, ok := r.Lookup("X", "host"); !ok {
		t.Error("the host with a mark was released")
	}
}

// At the cap, Room refuses only a new name, and AssignShare keeps one
// owner within its share while another still gets numbers.
func TestNumberingRoomAndShares(t *testing.T) {
	n := NewNumbering("")
	n.SetMaxNames(4)
	for i := 0; i < 3; i++ {
		if _, err := n.AssignShare("RTime/ARM", fmt.Sprint("x", i), nil, "uid 65534", 2, "arm.max_names_per_uid"); (err != nil) != (i == 2) {
			t.Fatalf("x%d: %v", i, err)
		}
	}
	if _, err := n.AssignShare("RTime/ARM", "x0", nil, "uid 0", 2, "arm.max_names_per_uid"); err != nil {
		t.Errorf("a name already numbered refused to another owner: %v", err)
	}
	if k, err := n.AssignShare("RTime/ARM", "root", func(k uint32) bool { return k < 5 }, "uid 0", 2, "arm.max_names_per_uid"); err != nil || k != 5 {
		t.Errorf("root's name: %d %v, want 5", k, err)
	}
	if got := n.Share("RTime/ARM", "uid 0"); len(got) != 1 {
		t.Errorf("uid 0 is charged for %v, want root only", got)
	}
	n.Assign("RTime/ARM", "y", nil)
	if err := n.Room("RTime/ARM", "z"); !errors.Is(err, ErrNumberingFull) {
		t.Errorf("Room at the cap: %v", err)
	}
	if err := n.Room("RTime/ARM", "x1"); err != nil {
		t.Errorf("Room of a name numbered: %v", err)
	}
	// Together: one place left for two new names refuses the second.
	m := NewNumbering("")
	m.SetMaxNames(3)
	m.Assign("Hotset", "a", nil)
	m.Assign("Hotset", "b", nil)
	if err := m.RoomFor("Hotset", "a", "new1", "new1", "b"); err != nil {
		t.Errorf("one new name (twice) and two numbered with room for one: %v", err)
	}
	if err := m.RoomFor("Hotset", "new1", "new2"); !errors.Is(err, ErrNumberingFull) || !strings.Contains(err.Error(), "Hotset/new2") {
		t.Errorf("two new names with room for one: %v, want an error naming new2", err)
	}
}

// At the cap only the instance that cannot be numbered is left out: the
// instances after it in the provider's order are served, and the refusal
// is a failure of the provider's source naming the setting.
func TestNumberingCapLeavesOutOnlyTheUnnumbered(t *testing.T) {
	num := NewNumbering("")
	num.SetMaxNames(3)
	num.Assign("Disk", "sda", func(k uint32) bool { return k == 1 })
	num.Assign("Disk", "sdb", func(k uint32) bool { return k == 1 })
	p := &churn{}
	p.set("new1", "new2", "sda", "sdb")
	h := NewHierarchy(Config{Base: testBase, Numbering: num})
	h.Add(p)
	s := h.Refresh()
	for _, name := range []string{"new1", "sda", "sdb"} {
		if _, err := s.Lookup("Disk/" + name + "/busy"); err != nil {
			t.Errorf("%s not served: %v", name, err)
		}
	}
	if _, err := s.Lookup("Disk/new2/"); err == nil {
		t.Error("new2 served beyond the cap")
	}
	if err := s.Failures["Disk numbering"]; !errors.Is(err, ErrNumberingFull) || !strings.Contains(err.Error(), "state.max_names_per_context") {
		t.Errorf("failure %v, want the cap's, naming the setting", err)
	}
}
