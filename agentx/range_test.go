package agentx

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/perfagent/subagent/asn1tree"
)

// testRanges covers 2.0 to 4.0 of testTree (range in the last
// sub-identifier) and row 2 of columns 2 and 3 (range in the middle).
var testRanges = []Registration{
	{Subtree: b("2"), RangeSubID: 9, UpperBound: 4},
	{Subtree: b("20.1.2.2"), RangeSubID: 11, UpperBound: 3, Priority: 50},
}

func TestRegistrationCheckAndString(t *testing.T) {
	good := map[string]Registration{
		"1.3.6.1.4.1.32473.1.[2-4]":        testRanges[0],
		"1.3.6.1.4.1.32473.1.20.1.[2-3].2": testRanges[1],
		"[1-1]":                            {Subtree: asn1tree.OID{1}, RangeSubID: 1, UpperBound: 1},
		"1.3.6.1.4.1.32473.1":              {Subtree: asn1tree.MustParse(testBase)},
	}
	for want, r := range good {
		if err := r.check("r"); err != nil {
			t.Errorf("%s refused: %v", want, err)
		}
		if got := r.String(); got != want {
			t.Errorf("String() = %s, want %s", got, want)
		}
	}
	bad := []Registration{
		{},
		{Subtree: b("2"), RangeSubID: 10, UpperBound: 4}, // beyond the OID
		{Subtree: b("2"), UpperBound: 4},                 // bound without a range
		{Subtree: b("5"), RangeSubID: 9, UpperBound: 4},  // upper below lower
		{Subtree: make(asn1tree.OID, 129)},
	}
	for _, r := range bad {
		if err := r.check("r"); err == nil {
			t.Errorf("%+v accepted", r)
		}
		if _, err := New(Config{Registrations: []Registration{r}}, testTree(t)); err == nil {
			t.Errorf("New accepted %+v", r)
		}
	}
	// Registrations alone are enough, and priorities default to Config's.
	sa, err := New(Config{Registrations: testRanges, Priority: 90}, testTree(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(sa.regs) != 2 || sa.regs[0].Priority != 90 || sa.regs[1].Priority != 50 {
		t.Errorf("registrations %+v", sa.regs)
	}
}

func TestRangeDispatch(t *testing.T) {
	r := newResponder(newScope(testRanges), testTree(t))
	get := ask(t, r, &packet{header: header{version: 1, typ: typeGet}, ranges: []searchRange{
		{start: b("1.0")}, {start: b("2.0")}, {start: b("4.0")}, {start: b("5.0")},
		{start: b("20.1.2.1")}, {start: b("20.1.2.2")}, {start: b("20.1.3.2")}, {start: b("20.1.3.3")}, {start: b("20.1.4.2")},
	}})
	want := "1.0=noSuchObject 2.0=Gauge32:42 4.0=OctetString:hello 5.0=noSuchObject " +
		"20.1.2.1=noSuchObject 20.1.2.2=Integer:22 20.1.3.2=OctetString:r2 20.1.3.3=noSuchObject 20.1.4.2=noSuchObject"
	if got := vbStrings(get.varbinds); got != want {
		t.Errorf("Get answered\n %s\nwant\n %s", got, want)
	}
	// Unbounded searches, as a master could send: each stays in the ranges.
	cases := map[string]searchRange{
		"2.0=Gauge32:42":          {start: asn1tree.MustParse(testBase), include: true},
		"3.0=Integer:-7":          {start: b("2.0")},
		"20.1.2.2=Integer:22":     {start: b("4.0")},
		"20.1.3.2=OctetString:r2": {start: b("20.1.2.2")},
		"20.1.3.3=endOfMibView":   {start: b("20.1.3.3")},
		"20.1.3.2=endOfMibView":   {start: b("20.1.3.2")},
		"5.0=endOfMibView":        {start: b("5.0"), end: b("20.1.2.2")},
	}
	for want, sr := range cases {
		if got := vbStrings(ask(t, r, getNext(sr)).varbinds); got != want {
			t.Errorf("GetNext from %s: %s, want %s", sr.start, got, want)
		}
	}
	bulk := ask(t, r, &packet{header: header{version: 1, typ: typeGetBulk}, maxRepetitions: 10, ranges: []searchRange{{start: b("1.0")}}})
	if got, want := vbStrings(bulk.varbinds), "2.0=Gauge32:42 3.0=Integer:-7 4.0=OctetString:hello 20.1.2.2=Integer:22 20.1.3.2=OctetString:r2 20.1.3.2=endOfMibView"; got != want {
		t.Errorf("GetBulk answered\n %s\nwant\n %s", got, want)
	}
}

// countingView counts searches.
type countingView struct {
	asn1tree.View
	searches int
}

func (v *countingView) Search(start asn1tree.OID, include bool, end asn1tree.OID) (asn1tree.OID, asn1tree.Value, bool) {
	v.searches++
	return v.View.Search(start, include, end)
}

// A range of four billion columns costs searches per entry, not per column.
func TestWideRangeIsCheap(t *testing.T) {
	sc := newScope([]Registration{{Subtree: b("20.1.2.2"), RangeSubID: 11, UpperBound: ^uint32(0)}})
	v := &countingView{View: testTree(t)()}
	var got []string
	start := asn1tree.MustParse(testBase)
	for {
		o, _, ok := sc.search(v, start, false, nil)
		if !ok {
			break
		}
		got = append(got, o.String())
		start = o
	}
	if fmt.Sprint(got) != fmt.Sprint([]string{b("20.1.2.2").String(), b("20.1.3.2").String()}) || v.searches > 10 {
		t.Errorf("walk %v took %d searches", got, v.searches)
	}
}

// scope.search agrees with a brute-force filter of the view on random
// registrations, views and search ranges.
func TestRangeSearchMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	randOID := func(min int) asn1tree.OID {
		o := asn1tree.OID{1}
		for n := min + rng.Intn(4); len(o) < n; {
			o = append(o, uint32(rng.Intn(4)))
		}
		return o
	}
	for iter := 0; iter < 300; iter++ {
		var regs []Registration
		for i := rng.Intn(3) + 1; i > 0; i-- {
			g := Registration{Subtree: randOID(2)}
			if rng.Intn(3) > 0 {
				g.RangeSubID = uint8(2 + rng.Intn(len(g.Subtree)-1))
				g.UpperBound = g.Subtree[g.RangeSubID-1] + uint32(rng.Intn(3))
			}
			regs = append(regs, g)
		}
		var entries []asn1tree.Entry[asn1tree.Value]
		seen := map[string]bool{}
		for i := 0; i < 40; i++ {
			o := randOID(1)
			if !seen[o.String()] {
				seen[o.String()] = true
				entries = append(entries, asn1tree.Entry[asn1tree.Value]{OID: o, Val: asn1tree.Int(int32(i))})
			}
		}
		tree, err := asn1tree.Build(entries)
		if err != nil {
			t.Fatal(err)
		}
		sc := newScope(regs)
		for q := 0; q < 20; q++ {
			start, include, end := randOID(1), rng.Intn(2) == 0, asn1tree.OID(nil)
			if rng.Intn(2) == 0 {
				end = randOID(1)
			}
			var want asn1tree.OID
			tree.Walk(start, nil, func(o asn1tree.OID, _ asn1tree.Value) bool {
				if o.Equal(start) && !include || !inRegs(regs, o) {
					return true
				}
				if len(end) == 0 || asn1tree.Compare(o, end) < 0 {
					want = o
				}
				return false
			})
			got, _, _ := sc.search(tree, start, include, end)
			if !got.Equal(want) {
				t.Fatalf("registrations %v: search(%s, %v, %s) = %s, want %s", regs, start, include, end, got, want)
			}
		}
	}
}

// inRegs is membership by enumerating every subtree of every range.
func inRegs(regs []Registration, o asn1tree.OID) bool {
	for _, g := range regs {
		if g.RangeSubID == 0 {
			if o.HasPrefix(g.Subtree) {
				return true
			}
			continue
		}
		for v := g.Subtree[g.RangeSubID-1]; v <= g.UpperBound; v++ {
			s := g.Subtree.Clone()
			s[g.RangeSubID-1] = v
			if o.HasPrefix(s) {
				return true
			}
		}
	}
	return false
}

// Ranges and priorities go out in Register, again after a reconnect, and
// in Unregister; the master's requests are answered inside the ranges only.
func TestRangeRegistrationsOverTheWire(t *testing.T) {
	m := newFakeMaster(t)
	cfg := testConfig(m.addr)
	cfg.Subtrees, cfg.Registrations, cfg.Priority = nil, testRanges, 100
	r := start(t, cfg)
	for conn := 0; conn < 2; conn++ {
		c := m.accept()
		c.handshake(cfg) // checks range, upper bound and priority of each Register
		waitFor(t, "Connected", r.sa.Connected)
		get := c.ask(&packet{header: header{typ: typeGet, flags: flagNetworkByteOrder, transactionID: 1},
			ranges: []searchRange{{start: b("3.0")}, {start: b("5.0")}, {start: b("20.1.3.2")}, {start: b("20.1.3.1")}}})
		if got, want := vbStrings(get.varbinds), "3.0=Integer:-7 5.0=noSuchObject 20.1.3.2=OctetString:r2 20.1.3.1=noSuchObject"; got != want {
			t.Errorf("connection %d: Get answered %s, want %s", conn, got, want)
		}
		next := c.ask(&packet{header: header{typ: typeGetNext, flags: flagNetworkByteOrder, transactionID: 2},
			ranges: []searchRange{{start: b("4.0")}, {start: b("20.1.2.2")}}})
		if got, want := vbStrings(next.varbinds), "20.1.2.2=Integer:22 20.1.3.2=OctetString:r2"; got != want {
			t.Errorf("connection %d: GetNext answered %s, want %s", conn, got, want)
		}
		if conn == 0 {
			c.c.Close() // the master goes away: everything is registered anew
			waitFor(t, "the subagent to notice", func() bool { return !r.sa.Connected() })
			continue
		}
		r.cancel()
		for _, g := range []Registration{{Subtree: testRanges[0].Subtree, RangeSubID: 9, UpperBound: 4, Priority: 100}, testRanges[1]} {
			un := c.expect(typeUnregister)
			if !un.subtree.Equal(g.Subtree) || un.rangeSubID != g.RangeSubID || un.upperBound != g.UpperBound || un.priority != g.Priority {
				t.Errorf("Unregister %s range %d-%d priority %d, want %s priority %d", un.subtree, un.rangeSubID, un.upperBound, un.priority, g, g.Priority)
			}
			c.respond(un, NoError)
		}
		c.respond(c.expect(typeClose), NoError)
		c.expectEOF()
	}
	r.stop(t)
	if n := r.logs.count("registrations=2"); n != 2 {
		t.Errorf("%d sessions logged with 2 registrations, want 2:\n%s", n, r.logs)
	}
}
