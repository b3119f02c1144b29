package hotset

import (
	"testing"
	"time"

	"github.com/perfagent/subagent/spmi"
)

func get(t *testing.T, s *spmi.Snapshot, path string) string {
	t.Helper()
	n, err := s.Lookup(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return n.Value.String()
}

// One evaluation reads the sources once, however many hotsets and peer
// sets; the tree then serves the feed table and the exceptions.
func TestProviderServesLastResults(t *testing.T) {
	f := newFake()
	disks(f, map[string]uint64{"sda": 0, "sdb": 0}, map[string]int64{"sda": 9, "sdb": 7})
	f.used["rootvg"] = map[string]float64{"lv1": 91}
	f.used["datavg"] = map[string]float64{"lv2": 97}
	e, err := New([]Def{
		{Name: "qlen", GrandParent: "Disk", Stat: "qlen", MaxResp: 2, Threshold: 5, Frequency: 5 * time.Minute,
			Feed: FeedThreshold, Excp: ExcpBoth, Severity: 4, TrapNo: 9},
		{Name: "full", GrandParent: "FS", Stat: "used", Feed: FeedAlways},
	}, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := spmi.NewHierarchy(spmi.Config{Base: testBase, MinAge: time.Hour})
	h.Add(f)
	h.Add(Provider{E: e})
	s := h.Refresh()
	if n, _ := s.Lookup("Hotset/qlen/count"); n == nil || n.Value.OK() {
		t.Fatalf("before any evaluation count should have no value: %v", n)
	}
	h.Invalidate() // the snapshot is young: make Tick refresh once
	before := f.collects
	evs := e.Tick(h)
	if f.collects != before+1 {
		t.Errorf("one evaluation of 2 hotsets and 3 peer sets collected %d times", f.collects-before)
	}
	if len(evs) != 1 || names(evs[0].Items) != "sda,sdb" {
		t.Fatalf("events %+v", evs)
	}
	s = h.Fresh() // Tick invalidated the young snapshot, which held no results
	if f.collects != before+2 {
		t.Fatalf("the read after Tick served the young snapshot without the results")
	}
	for path, want := range map[string]string{
		"Hotset/qlen/stat":         "Disk/*/qlen",
		"Hotset/qlen/count":        "2",
		"Hotset/qlen/avail":        "2",
		"Hotset/qlen/trapno":       "9",
		"Hotset/qlen/error":        "0",
		"Hotset/qlen/feed/1/name":  "sda",
		"Hotset/qlen/feed/2/name":  "sdb",
		"Hotset/qlen/feed/2/value": "7",
		"Hotset/qlen/feed/1/oid":   testBase.String() + ".200.1.4.1.17.1", // diskQlen.1
		"Hotset/qlen/excp/1/peers": "sda=9 sdb=7",
		"Hotset/qlen/excp/1/count": "2",
		"Hotset/full/groups":       "2",
		"Hotset/full/feed/1/group": "FS/datavg/",
		"Hotset/full/feed/2/path":  "FS/rootvg/lv1/used",
		"Hotset/full/feed/2/rank":  "1",
	} {
		if got := get(t, s, path); got != want {
			t.Errorf("%s = %q, want %q", path, got, want)
		}
	}
	n, _ := s.Lookup("Hotset/qlen/")
	if n.Descr != "trap 9: Disk/*/qlen" || n.ASN == 0 {
		t.Errorf("hotset instance %q numbered %d", n.Descr, n.ASN)
	}
}
