package hotset

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/spmi"
)

func disks(f *fakeHost, busy map[string]uint64, qlen map[string]int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for k, v := range busy {
		f.busy[k] = v
	}
	for k, v := range qlen {
		f.qlen[k] = v
	}
}

func names(items []Item) string {
	var s []string
	for _, it := range items {
		s = append(s, it.Name)
	}
	return strings.Join(s, ",")
}

func mustEngine(t *testing.T, c *clock, defs ...Def) *Engine {
	t.Helper()
	e, err := New(defs, 5, c.now)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestValidateGuideRules(t *testing.T) {
	ok := Def{Name: "busy", GrandParent: "Disk", Stat: "busy", MaxResp: 3, Threshold: 80, Frequency: 5 * time.Minute,
		Feed: FeedThreshold, Excp: ExcpBoth, Severity: 2, TrapNo: 1}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid definition refused: %v", err)
	}
	for _, c := range []struct {
		field string
		edit  func(*Def)
	}{
		{"name", func(d *Def) { d.Name = "1bad/name" }},
		{"maxresp", func(d *Def) { d.MaxResp = 0 }},
		{"threshold", func(d *Def) { d.Threshold = 0 }},
		{"frequency", func(d *Def) { d.Frequency = 4 * time.Minute }},
		{"severity", func(d *Def) { d.Severity = 0 }},
		{"trap_no", func(d *Def) { d.TrapNo = 0 }},
		{"feed_type", func(d *Def) { d.Feed, d.Excp = FeedNone, ExcpNone }},
	} {
		d := ok
		c.edit(&d)
		err := d.Validate()
		if err == nil || !strings.Contains(err.Error(), `hotset "`+d.Name+`": `+c.field+":") || spmierr.CodeOf(err) != spmierr.SiBadArgument {
			t.Errorf("%s: got %v, want SiBadArgument naming the hotset and %s", c.field, err, c.field)
		}
	}
	// Severity is needed for exceptions only, trap_no for traps only;
	// feeds alone need neither threshold nor maxresp.
	for _, d := range []Def{
		{Name: "t", GrandParent: "Disk", Stat: "busy", MaxResp: 1, Threshold: 1, Frequency: 5 * time.Minute, Excp: ExcpTrap, TrapNo: 3},
		{Name: "x", GrandParent: "Disk", Stat: "busy", MaxResp: 1, Threshold: -1, Frequency: time.Hour, Excp: ExcpException, Severity: 1},
		{Name: "f", GrandParent: "Disk", Stat: "busy", Feed: FeedAlways},
	} {
		if err := d.Validate(); err != nil {
			t.Errorf("%s: %v", d.Name, err)
		}
	}
	if _, err := New([]Def{ok, ok}, 5, nil); spmierr.CodeOf(err) != spmierr.SiDuplicate {
		t.Errorf("two hotsets of one name: %v", err)
	}
}

func TestParsePath(t *testing.T) {
	gp, st, err := ParsePath("RTime/ARM/*/respavg")
	if err != nil || gp != "RTime/ARM" || st != "respavg" {
		t.Errorf("got %q %q %v", gp, st, err)
	}
	for _, bad := range []string{"Disk/busy", "Disk/*", "*/busy", "Disk/sda/busy", "Disk/*/*/busy", "Disk//*/busy", "Disk/*/busy/"} {
		if _, _, err := ParsePath(bad); err == nil && bad != "Disk/*/busy/" {
			t.Errorf("%q accepted", bad)
		}
	}
}

// Counters compare as rates per second, ordered descending and capped at
// maxresp; avail counts all that qualify.
func TestCounterRatesOrderAndMaxResp(t *testing.T) {
	f, c := newFake(), newClock()
	e := mustEngine(t, c, Def{Name: "busy", GrandParent: "Disk", Stat: "busy", MaxResp: 2, Threshold: 50, Feed: FeedThreshold})
	disks(f, map[string]uint64{"sda": 1000, "sdb": 1000, "sdc": 1000, "sdd": 1000}, nil)
	e.Evaluate(snapAt(f, c.t))
	if v := e.Views()[0].Result; len(v.Groups) != 1 || len(v.Groups[0].Items) != 0 {
		t.Fatalf("first evaluation has no rates yet, got %+v", v.Groups)
	}
	c.add(10 * time.Second)
	// Rates per second: sda 90, sdb 60, sdc 95, sdd 10.
	disks(f, map[string]uint64{"sda": 1900, "sdb": 1600, "sdc": 1950, "sdd": 1100}, nil)
	e.Evaluate(snapAt(f, c.t))
	g := e.Views()[0].Result.Groups[0]
	if names(g.Items) != "sdc,sda" || g.Avail != 3 || g.Parent != "Disk/" {
		t.Fatalf("feed %s avail %d parent %s, want sdc,sda avail 3 Disk/", names(g.Items), g.Avail, g.Parent)
	}
	if g.Items[0].Value != 95 || g.Items[0].OID.String() != testBase.String()+".200.1.4.1.16.3" || g.Items[0].Path != "Disk/sdc/busy" {
		t.Errorf("first item %+v", g.Items[0])
	}
	// A counter reset is no rate spike.
	c.add(10 * time.Second)
	disks(f, map[string]uint64{"sda": 5}, nil)
	e.Evaluate(snapAt(f, c.t))
	if g := e.Views()[0].Result.Groups[0]; strings.Contains(names(g.Items), "sda") {
		t.Errorf("a reset counter qualified: %+v", g.Items)
	}
}

// A negative threshold selects values below its absolute value, lowest
// first; quantities compare as levels.
func TestNegativeThresholdAscending(t *testing.T) {
	f, c := newFake(), newClock()
	disks(f, map[string]uint64{"a": 0, "b": 0, "c": 0, "d": 0}, map[string]int64{"a": 3, "b": 1, "c": 9, "d": 2})
	e := mustEngine(t, c, Def{Name: "idle", GrandParent: "Disk", Stat: "qlen", MaxResp: 5, Threshold: -3, Feed: FeedThreshold})
	e.Evaluate(snapAt(f, c.t))
	g := e.Views()[0].Result.Groups[0]
	if names(g.Items) != "b,d" || g.Avail != 2 || g.Items[0].Value != 1 {
		t.Fatalf("got %s (avail %d), want b,d", names(g.Items), g.Avail)
	}
}

// A zero threshold feeds every value, still capped; feed "always"
// ignores the threshold.
func TestZeroThresholdAndAlways(t *testing.T) {
	f, c := newFake(), newClock()
	disks(f, nil, map[string]int64{"a": 3, "b": 1, "c": 9, "d": 2})
	disks(f, map[string]uint64{"a": 0, "b": 0, "c": 0, "d": 0}, nil)
	e := mustEngine(t, c,
		Def{Name: "all", GrandParent: "Disk", Stat: "qlen", MaxResp: 3, Feed: FeedThreshold},
		Def{Name: "always", GrandParent: "Disk", Stat: "qlen", MaxResp: 0, Threshold: 100, Feed: FeedAlways},
		Def{Name: "text", GrandParent: "Disk", Stat: "model", Feed: FeedAlways},
		Def{Name: "gone", GrandParent: "Nope", Stat: "x", Feed: FeedAlways},
	)
	e.Evaluate(snapAt(f, c.t))
	vs := e.Views()
	if g := vs[0].Result.Groups[0]; names(g.Items) != "c,a,d" || g.Avail != 4 {
		t.Errorf("zero threshold: %s avail %d, want c,a,d avail 4", names(g.Items), g.Avail)
	}
	if g := vs[1].Result.Groups[0]; names(g.Items) != "c,a,d,b" || g.Avail != 4 {
		t.Errorf("always with maxresp 0: %s avail %d", names(g.Items), g.Avail)
	}
	if err := vs[2].Result.Err; spmierr.CodeOf(err) != spmierr.SiBadArgument {
		t.Errorf("text statistic: %v", err)
	}
	if err := vs[3].Result.Err; !errors.Is(err, &spmierr.Error{Code: spmierr.SiNotFound}) {
		t.Errorf("missing grandparent: %v", err)
	}
}

// Several levels of instances: one peer set per lowest-level parent, also
// for parents that appear later, maxresp applied to each.
func TestMultiLevelGrandparent(t *testing.T) {
	f, c := newFake(), newClock()
	f.used["rootvg"] = map[string]float64{"lv1": 91, "lv2": 95, "lv3": 99}
	f.used["datavg"] = map[string]float64{"lv1": 97, "lv9": 10}
	e := mustEngine(t, c, Def{Name: "full", GrandParent: "FS", Stat: "used", MaxResp: 2, Threshold: 90, Feed: FeedThreshold})
	e.Evaluate(snapAt(f, c.t))
	gs := e.Views()[0].Result.Groups
	if len(gs) != 2 || gs[0].Parent != "FS/datavg/" || gs[1].Parent != "FS/rootvg/" {
		t.Fatalf("groups %+v", gs)
	}
	if names(gs[0].Items) != "lv1" || names(gs[1].Items) != "lv3,lv2" || gs[1].Avail != 3 {
		t.Errorf("datavg %s, rootvg %s (avail %d)", names(gs[0].Items), names(gs[1].Items), gs[1].Avail)
	}
	f.used["newvg"] = map[string]float64{"lvx": 93}
	e.Evaluate(snapAt(f, c.t))
	if gs := e.Views()[0].Result.Groups; len(gs) != 3 || gs[1].Parent != "FS/newvg/" || names(gs[1].Items) != "lvx" {
		t.Errorf("a volume group that appeared later: %+v", gs)
	}
	// ARM: one peer set per application, transactions as peers; an
	// application registered later gets its own.
	f.resp["checking"] = map[string]float64{"deposit": 2500, "withdraw": 900}
	f.resp["savings"] = map[string]float64{"open": 3100, "close": 2200, "audit": 4000}
	arm := mustEngine(t, c, Def{Name: "slowarm", GrandParent: "ARM", Stat: "respavg", MaxResp: 2, Threshold: 2000, Feed: FeedThreshold})
	arm.Evaluate(snapAt(f, c.t))
	gs = arm.Views()[0].Result.Groups
	if len(gs) != 2 || gs[0].Parent != "ARM/checking/" || names(gs[0].Items) != "deposit" || names(gs[1].Items) != "audit,open" || gs[1].Avail != 3 {
		t.Errorf("ARM groups %+v", gs)
	}
	f.resp["loans"] = map[string]float64{"apply": 2001}
	arm.Evaluate(snapAt(f, c.t))
	if gs := arm.Views()[0].Result.Groups; len(gs) != 3 || gs[1].Parent != "ARM/loans/" {
		t.Errorf("an application that appeared later: %+v", gs)
	}
	// Naming one parent is valid and makes one peer set.
	e2 := mustEngine(t, c, Def{Name: "root", GrandParent: "FS/rootvg", Stat: "used", MaxResp: 1, Feed: FeedAlways})
	e2.Evaluate(snapAt(f, c.t))
	if gs := e2.Views()[0].Result.Groups; len(gs) != 1 || names(gs[0].Items) != "lv3" {
		t.Errorf("FS/rootvg: %+v", gs)
	}
}

// Events of a peer set come at most once per frequency, with a
// controllable clock; exceptions land in a bounded ring.
func TestFrequencyLimitAndExceptionRing(t *testing.T) {
	f, c := newFake(), newClock()
	disks(f, map[string]uint64{"a": 0, "b": 0}, map[string]int64{"a": 9, "b": 1})
	e := mustEngine(t, c, Def{Name: "q", GrandParent: "Disk", Stat: "qlen", MaxResp: 1, Threshold: 5,
		Frequency: 5 * time.Minute, Excp: ExcpBoth, Severity: 3, TrapNo: 7})
	var got []int
	for i := 0; i < 12; i++ { // one evaluation a minute for 12 minutes
		evs := e.Evaluate(snapAt(f, c.t))
		got = append(got, len(evs))
		if len(evs) == 1 && (names(evs[0].Items) != "a" || evs[0].Def.TrapNo != 7 || evs[0].Parent != "Disk/") {
			t.Fatalf("event %+v", evs[0])
		}
		c.add(time.Minute)
	}
	want := []int{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("events per minute %v, want %v", got, want)
		}
	}
	// Below the threshold: nothing, however long.
	disks(f, nil, map[string]int64{"a": 1})
	c.add(time.Hour)
	if evs := e.Evaluate(snapAt(f, c.t)); len(evs) != 0 {
		t.Errorf("quiet peers raised %+v", evs)
	}
	v := e.Views()[0]
	if len(v.Exceptions) != 3 || v.Exceptions[2].Seq != 3 || v.Events != 3 {
		t.Errorf("ring %+v, events %d", v.Exceptions, v.Events)
	}
	for i := 0; i < 10; i++ {
		disks(f, nil, map[string]int64{"a": 9})
		c.add(5 * time.Minute)
		e.Evaluate(snapAt(f, c.t))
	}
	if x := e.Views()[0].Exceptions; len(x) != 5 || x[0].Seq != 9 || x[4].Seq != 13 {
		t.Errorf("ring keeps %d, seq %d..%d; want the last 5 (9..13)", len(x), x[0].Seq, x[len(x)-1].Seq)
	}
}

// A reload keeps the state of unchanged hotsets: no repeated event.
func TestReplaceKeepsUnchanged(t *testing.T) {
	f, c := newFake(), newClock()
	disks(f, map[string]uint64{"a": 0}, map[string]int64{"a": 9})
	d := Def{Name: "q", GrandParent: "Disk", Stat: "qlen", MaxResp: 1, Threshold: 5, Frequency: 5 * time.Minute, Excp: ExcpTrap, TrapNo: 1}
	e := mustEngine(t, c, d)
	if n := len(e.Evaluate(snapAt(f, c.t))); n != 1 {
		t.Fatalf("%d events", n)
	}
	other := Def{Name: "z", GrandParent: "Disk", Stat: "qlen", Feed: FeedAlways}
	if err := e.Replace([]Def{other, d}); err != nil {
		t.Fatal(err)
	}
	if n := len(e.Evaluate(snapAt(f, c.t))); n != 0 {
		t.Errorf("unchanged hotset raised again after a reload")
	}
	bad := d
	bad.Threshold = 0
	if err := e.Replace([]Def{bad}); err == nil || len(e.Defs()) != 2 {
		t.Errorf("bad reload: %v, %d hotsets kept", err, len(e.Defs()))
	}
}

// A statistic that matches nothing is SiNotFound with the nearest path
// that matches, in the result (error, errmsg); peers that appear later
// join and clear it.
func TestMisspelledStatisticReportsAndSuggests(t *testing.T) {
	f, c := newFake(), newClock()
	disks(f, map[string]uint64{"sda": 1}, map[string]int64{"sda": 3})
	e := mustEngine(t, c,
		Def{Name: "typo", GrandParent: "Disk", Stat: "bussy", Feed: FeedAlways},
		Def{Name: "cx", GrandParent: "Dsik", Stat: "qlen", Feed: FeedAlways},
		Def{Name: "case", GrandParent: "Disk", Stat: "QLen", Feed: FeedAlways},
		Def{Name: "far", GrandParent: "Disk", Stat: "throughput", Feed: FeedAlways},
		Def{Name: "later", GrandParent: "FS", Stat: "used", MaxResp: 1, Threshold: 50, Frequency: 5 * time.Minute,
			Feed: FeedThreshold, Excp: ExcpTrap, TrapNo: 2},
	)
	e.Evaluate(snapAt(f, c.t))
	vs := e.Views()
	for i, want := range []string{
		"Disk/*/bussy matches no statistic: no peer under Disk holds \"bussy\"; did you mean Disk/*/busy?",
		"Dsik/*/qlen matches no statistic: there is no context Dsik; did you mean Disk/*/qlen?",
		"did you mean Disk/*/qlen?",
		"no peer under Disk holds \"throughput\"",
		"FS/*/used matches no statistic",
	} {
		err := vs[i].Result.Err
		if spmierr.CodeOf(err) != spmierr.SiNotFound || !strings.Contains(err.Error(), want) || len(vs[i].Result.Groups) != 0 {
			t.Errorf("%s: %v, want SiNotFound with %q", vs[i].Def.Name, err, want)
		}
	}
	if err := vs[3].Result.Err; strings.Contains(err.Error(), "did you mean") {
		t.Errorf("far from every name, yet a suggestion: %v", err)
	}
	// The file systems' supplier comes: the hotset joins them at once.
	f.used["rootvg"] = map[string]float64{"lv1": 91}
	c.add(time.Minute)
	evs := e.Evaluate(snapAt(f, c.t))
	if v := e.Views()[4]; v.Result.Err != nil || len(v.Result.Groups) != 1 || len(evs) != 1 || names(evs[0].Items) != "lv1" {
		t.Errorf("after the statistic appeared: err %v, groups %+v, events %+v", v.Result.Err, v.Result.Groups, evs)
	}
	if got := Suggest(snapAt(f, c.t), "FS", "usd"); got != "FS/*/used" {
		t.Errorf("Suggest(FS, usd) = %q", got)
	}
}

// Returned items carry the unit of their compared value: a counter's is
// per second.
func TestItemUnits(t *testing.T) {
	f, c := newFake(), newClock()
	disks(f, map[string]uint64{"a": 0}, map[string]int64{"a": 9})
	e := mustEngine(t, c,
		Def{Name: "q", GrandParent: "Disk", Stat: "qlen", Feed: FeedAlways},
		Def{Name: "b", GrandParent: "Disk", Stat: "busy", Feed: FeedAlways})
	e.Evaluate(snapAt(f, c.t))
	c.add(2 * time.Second)
	disks(f, map[string]uint64{"a": 10}, nil)
	e.Evaluate(snapAt(f, c.t))
	vs := e.Views()
	if it := vs[0].Result.Groups[0].Items[0]; it.Units != "" || it.Value != 9 {
		t.Errorf("quantity without units: %+v", it)
	}
	if it := vs[1].Result.Groups[0].Items[0]; it.Units != "per second" || it.Value != 5 {
		t.Errorf("counter: %+v, want 5 per second", it)
	}
}

// A returned item's OID is the one the configured views serve with the
// item's served value: the table cell when tables are served, the
// scalar with views: scalars.
func TestItemOIDIsServed(t *testing.T) {
	for _, v := range []spmi.Views{spmi.ViewScalars, spmi.ViewTables, spmi.ViewBoth} {
		f, c := newFake(), newClock()
		e := mustEngine(t, c, Def{Name: "q", GrandParent: "Disk", Stat: "qlen", Threshold: 5, Feed: FeedThreshold})
		disks(f, map[string]uint64{"sda": 0, "sdb": 0}, map[string]int64{"sda": 9, "sdb": 7})
		b := spmi.NewBuilder(testBase, nil, c.t)
		b.SetViews(v)
		if err := f.Collect(b); err != nil {
			t.Fatal(err)
		}
		s := b.Finish()
		e.Evaluate(s)
		items := e.Views()[0].Result.Groups[0].Items
		if len(items) != 2 {
			t.Fatalf("views %d: items %+v", v, items)
		}
		want := map[spmi.Views]string{spmi.ViewScalars: ".4.2.7.0", spmi.ViewTables: ".200.1.4.1.17.2", spmi.ViewBoth: ".200.1.4.1.17.2"}[v]
		if got := items[1].OID.String(); got != testBase.String()+want {
			t.Errorf("views %d: sdb's OID %s, want base%s", v, got, want)
		}
		view := s.View()
		for _, it := range items {
			got, ok := view.Get(it.OID)
			if !ok || got.String() != it.Served.String() {
				t.Errorf("views %d: %s is served as %v (%v), the item says %v", v, it.OID, got, ok, it.Served)
			}
		}
	}
}

// A SiHotAlways feed returns every counter from the first evaluation: its
// raw count (the guide's SpmiHotItems.val), rate 0 marked NoRate, after
// the rated ones; from the second, rates. A threshold feed waits for rates.
func TestAlwaysFeedsCountersFromTheFirstRead(t *testing.T) {
	f, c := newFake(), newClock()
	e := mustEngine(t, c,
		Def{Name: "all", GrandParent: "Disk", Stat: "busy", MaxResp: 5, Feed: FeedAlways},
		Def{Name: "hot", GrandParent: "Disk", Stat: "busy", MaxResp: 5, Threshold: 1, Feed: FeedThreshold})
	disks(f, map[string]uint64{"sda": 1000, "sdb": 3000}, nil)
	e.Evaluate(snapAt(f, c.t))
	vs := e.Views()
	g := vs[0].Result.Groups[0]
	if names(g.Items) != "sda,sdb" || g.Avail != 2 || !g.Items[0].NoRate || g.Items[0].Value != 0 || g.Items[0].Raw != 1000 || g.Items[1].Raw != 3000 {
		t.Fatalf("first SiHotAlways read: %+v", g)
	}
	if g := vs[1].Result.Groups[0]; len(g.Items) != 0 || g.Avail != 0 {
		t.Fatalf("first threshold read: %+v, want nothing until there are rates", g)
	}
	c.add(10 * time.Second)
	disks(f, map[string]uint64{"sda": 2000, "sdb": 3500}, nil)
	e.Evaluate(snapAt(f, c.t))
	g = e.Views()[0].Result.Groups[0]
	if names(g.Items) != "sda,sdb" || g.Items[0].NoRate || g.Items[0].Value != 100 || g.Items[0].Raw != 2000 || g.Items[1].Value != 50 {
		t.Fatalf("second read: %+v, want rates 100 and 50 with raw counts", g)
	}
}
