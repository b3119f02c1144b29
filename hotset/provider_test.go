package hotset

import (
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/mib"
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
	// Every result is NotYet, with the reason, before the first evaluation
	// (a row just created over SNMP): never a failed source.
	results := []string{"Hotset/qlen/avail", "Hotset/qlen/count", "Hotset/qlen/groups", "Hotset/qlen/error", "Hotset/qlen/errmsg"}
	smp, _ := s.Read(results)
	for _, it := range smp.Items {
		if it.Err == nil || !it.NotYet || !strings.Contains(it.Err.Msg, "not evaluated yet") {
			t.Errorf("%s before any evaluation: %+v, want NotYet with the reason", it.Path, it)
		}
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
		"Hotset/qlen/errmsg":       "", // no error: empty, not "could not be read"
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

// decodeDateAndTime reads SNMPv2-TC's DateAndTime as a manager does: 8
// octets of local time, or 11 with the direction and offset from UTC.
func decodeDateAndTime(t *testing.T, b []byte) time.Time {
	t.Helper()
	if len(b) != 8 && len(b) != 11 {
		t.Fatalf("DateAndTime of %d octets: % x", len(b), b)
	}
	loc := time.Local
	if len(b) == 11 {
		if b[8] != '+' && b[8] != '-' || b[9] > 14 || b[10] > 59 {
			t.Fatalf("DateAndTime offset % x", b[8:])
		}
		off := int(b[9])*3600 + int(b[10])*60
		if b[8] == '-' {
			off = -off
		}
		loc = time.FixedZone("", off)
	}
	if b[2] < 1 || b[2] > 12 || b[3] < 1 || b[3] > 31 || b[4] > 23 || b[5] > 59 || b[6] > 60 || b[7] > 9 {
		t.Fatalf("DateAndTime fields out of range: % x", b)
	}
	return time.Date(int(b[0])<<8|int(b[1]), time.Month(b[2]), int(b[3]), int(b[4]), int(b[5]), int(b[6]), int(b[7])*1e8, loc)
}

// An exception's time is served as the DateAndTime the MIB declares
// (hotsetExcpTime), while the SPMI view and subagent get keep the
// seconds since 1970.
func TestExceptionTimeIsServedAsDateAndTime(t *testing.T) {
	f := newFake()
	disks(f, map[string]uint64{"sda": 0}, map[string]int64{"sda": 9})
	e, err := New([]Def{{Name: "qlen", GrandParent: "Disk", Stat: "qlen", MaxResp: 1, Threshold: 5, Frequency: 5 * time.Minute,
		Feed: FeedThreshold, Excp: ExcpException, Severity: 1}}, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := spmi.NewHierarchy(spmi.Config{Base: testBase, MinAge: time.Hour})
	h.Add(f)
	h.Add(Provider{E: e})
	h.Refresh()
	h.Invalidate()
	before := time.Now().Truncate(time.Second)
	if evs := e.Tick(h); len(evs) != 1 {
		t.Fatalf("events %+v", evs)
	}
	after := time.Now()
	snap := h.Fresh()
	m, err := mib.Generate(mib.FromSnapshot(snap), mib.Options{})
	if err != nil {
		t.Fatal(err)
	}
	declared := ""
	for _, o := range m.Objects {
		if o.Path == "Hotset/*/excp/*/time" {
			declared = o.Syntax
		}
	}
	if declared != "DateAndTime" {
		t.Fatalf("the MIB declares the exceptions' time as %q, want DateAndTime", declared)
	}
	n, err := snap.Lookup("Hotset/qlen/excp/1/time")
	if err != nil {
		t.Fatal(err)
	}
	secs := n.Value.Uint64()
	if got := time.Unix(int64(secs), 0); got.Before(before) || got.After(after) {
		t.Fatalf("the SPMI view holds %d (%s), not the time of the exception", secs, got)
	}
	v := spmi.SNMPValue(n.Stat, n.Value)
	if v.Kind != asn1tree.OctetString || len(v.Str) != 11 {
		t.Fatalf("served as %v, want an 11-octet DateAndTime", v)
	}
	if got := decodeDateAndTime(t, []byte(v.Str)); !got.Equal(time.Unix(int64(secs), 0)) {
		t.Errorf("the DateAndTime served says %s, the exception was raised at %s", got, time.Unix(int64(secs), 0))
	}
}
