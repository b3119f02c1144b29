package responder

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/asn1tree/walktest"
)

// moments is the source of the walk tests: moment n's table is
// base.2.<column>.<row>, columns 1 and 2, rows n to n+4.
func moments() *walktest.Moments {
	return &walktest.Moments{Table: oid(base).Append(2), Cols: []uint32{1, 2},
		Extra: []asn1tree.Entry[asn1tree.Value]{{OID: oid(base).Append(3, 0), Val: asn1tree.Int(1)}}}
}

func current(src *walktest.Moments) uint64 {
	n, _ := src.Counts()
	return n
}

func newWalkResponder(t testing.TB, src *walktest.Moments) *Responder {
	t.Helper()
	r, err := NewWithSource(Config{Community: "public", Listen: "127.0.0.1:0"}, src.Source(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// askFrom answers one request as if it came from peer.
func askFrom(t *testing.T, r *Responder, peer netip.AddrPort, req []byte) *gosnmp.SnmpPacket {
	t.Helper()
	s := scratch{from: peer}
	out := r.handle(req, &s)
	if out == nil {
		t.Fatalf("no response (%v)", s.why)
	}
	return checkResponse(t, r, req, out)
}

// walkTable walks the table under base.2 one column after the other, as
// snmptable does, with GetNext or with GetBulk of maxRep repetitions, and
// calls between after each request. It returns the cells by
// "column.row" with their values, and the number of requests.
func walkTable(t *testing.T, r *Responder, peer netip.AddrPort, maxRep uint32, between func()) (map[string]uint64, int) {
	t.Helper()
	table := "." + base + ".2."
	cells := map[string]uint64{}
	next := base + ".2"
	for n := 1; n <= 100; n++ {
		req := reqPacket(t, gosnmp.Version2c, "public", gosnmp.GetNextRequest, 0, 0, next)
		if maxRep > 0 {
			req = reqPacket(t, gosnmp.Version2c, "public", gosnmp.GetBulkRequest, 0, maxRep, next)
		}
		p := askFrom(t, r, peer, req)
		between()
		for _, v := range p.Variables {
			cell, ok := strings.CutPrefix(v.Name, table)
			if !ok {
				return cells, n
			}
			cells[cell] = gosnmp.ToBigInt(v.Value).Uint64()
			next = v.Name
		}
	}
	t.Fatal("the walk does not end")
	return nil, 0
}

// A walk across requests is answered from its first request's moment,
// while another manager's requests in between make new moments; a new
// walk gets the current moment.
func TestWalkAnsweredFromOneMoment(t *testing.T) {
	for _, c := range []struct {
		name   string
		maxRep uint32
	}{{"GetNext", 0}, {"GetBulk", 3}} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := moments()
				r := newWalkResponder(t, src)
				a := netip.MustParseAddrPort("127.0.0.1:4000")
				b := netip.MustParseAddrPort("127.0.0.1:4001") // another manager
				other := func() {
					// b's requests start walks: a new moment each.
					askFrom(t, r, b, reqPacket(t, gosnmp.Version2c, "public", gosnmp.GetNextRequest, 0, 0, base+".2"))
					time.Sleep(time.Second)
				}
				for round := range 2 {
					start := current(src) + 1
					_, before := src.Counts()
					cells, reqs := walkTable(t, r, a, c.maxRep, other)
					src.CheckOneMoment(t, fmt.Sprintf("walk %d", round+1), cells, start)
					// One moment for a's walk, one for each request of b's.
					_, fresh := src.Counts()
					if got := fresh - before; reqs < 3 || got != reqs+1 {
						t.Errorf("%d current moments for a walk of %d requests, want 1 for it and %d for b's", got, reqs, reqs)
					}
				}
			})
		})
	}
}

// A walk that pauses for longer than the gap goes on from a fresh moment:
// its rows then show the later moment.
func TestWalkAfterTheGapIsFresh(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := moments()
		r := newWalkResponder(t, src)
		a := netip.MustParseAddrPort("127.0.0.1:4000")
		get := func(o string) *gosnmp.SnmpPacket {
			return askFrom(t, r, a, reqPacket(t, gosnmp.Version2c, "public", gosnmp.GetNextRequest, 0, 0, o))
		}
		p := get(base + ".2")
		if v := gosnmp.ToBigInt(p.Variables[0].Value).Uint64(); v != 1 {
			t.Fatalf("first request from moment %d", v)
		}
		time.Sleep(asn1tree.DefaultWalkGap)
		p = get(p.Variables[0].Name)
		if v := gosnmp.ToBigInt(p.Variables[0].Value).Uint64(); v != 1 {
			t.Fatalf("a request %v after the last goes on from moment %d, want 1", asn1tree.DefaultWalkGap, v)
		}
		time.Sleep(asn1tree.DefaultWalkGap + time.Millisecond)
		p = get(p.Variables[0].Name)
		if v := gosnmp.ToBigInt(p.Variables[0].Value).Uint64(); v != 2 {
			t.Fatalf("a request after more than the gap from moment %d, want the fresh 2", v)
		}
		// A Get is always of the current moment, and does not end a walk.
		g := askFrom(t, r, a, reqPacket(t, gosnmp.Version2c, "public", gosnmp.GetRequest, 0, 0, base+".3.0"))
		if g.Variables[0].Type != gosnmp.Integer || current(src) != 3 {
			t.Fatalf("Get answered %v from moment %d", g.Variables[0], current(src))
		}
		p = get(p.Variables[0].Name)
		if v := gosnmp.ToBigInt(p.Variables[0].Value).Uint64(); v != 2 {
			t.Fatalf("the walk goes on from moment %d after a Get, want 2", v)
		}
	})
}

// The stats tell how old the data of the last answer was, and the largest
// of the last minute or so: a walk kept on one moment ages with it.
func TestDataAge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := moments()
		r := newWalkResponder(t, src)
		a := netip.MustParseAddrPort("127.0.0.1:4000")
		p := askFrom(t, r, a, reqPacket(t, gosnmp.Version2c, "public", gosnmp.GetNextRequest, 0, 0, base+".2"))
		if c := r.Stats().Snapshot(); c.DataAge != 0 || c.MaxDataAge != 0 {
			t.Errorf("fresh data: age %v, largest %v", c.DataAge, c.MaxDataAge)
		}
		time.Sleep(3 * time.Second)
		askFrom(t, r, a, reqPacket(t, gosnmp.Version2c, "public", gosnmp.GetNextRequest, 0, 0, p.Variables[0].Name))
		if c := r.Stats().Snapshot(); c.DataAge != 3*time.Second || c.MaxDataAge != 3*time.Second {
			t.Errorf("a walk's moment 3 s on: age %v, largest %v", c.DataAge, c.MaxDataAge)
		}
		askFrom(t, r, a, reqPacket(t, gosnmp.Version2c, "public", gosnmp.GetRequest, 0, 0, base+".3.0"))
		if c := r.Stats().Snapshot(); c.DataAge != 0 || c.MaxDataAge != 3*time.Second {
			t.Errorf("then a fresh answer: age %v, largest %v", c.DataAge, c.MaxDataAge)
		}
		time.Sleep(2 * time.Minute)
		if c := r.Stats().Snapshot(); c.MaxDataAge != 0 {
			t.Errorf("2 minutes on the largest age is still %v", c.MaxDataAge)
		}
	})
}

// Following walks allocates nothing per request once grown.
func TestWalksAllocateNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := fixtureTree(t)
		m := &walktest.Moment{N: 1}
		src := func(any) (asn1tree.View, any) { return tr, m }
		r, err := NewWithSource(Config{Community: "public", Listen: "127.0.0.1:0"}, src, nil)
		if err != nil {
			t.Fatal(err)
		}
		first := reqPacket(t, gosnmp.Version2c, "public", gosnmp.GetBulkRequest, 0, 20, base)
		cont := reqPacket(t, gosnmp.Version2c, "public", gosnmp.GetBulkRequest, 0, 20, rowOID(10))
		s := scratch{from: netip.MustParseAddrPort("127.0.0.1:4000")}
		for range asn1tree.DefaultWalkMax + 1 { // grow the scratch and the walks
			r.handle(first, &s)
			r.handle(cont, &s)
		}
		if n := testing.AllocsPerRun(100, func() {
			r.handle(first, &s)
			r.handle(cont, &s)
		}); n != 0 {
			t.Errorf("%v allocations per request", n)
		}
	})
}

// A GetBulk's walk is told by its first repeater, not by a non-repeater
// (a manager may ask for sysUpTime in every request).
func TestBulkWalkFollowsTheRepeaters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := moments()
		r := newWalkResponder(t, src)
		a := netip.MustParseAddrPort("127.0.0.1:4000")
		p := askFrom(t, r, a, reqPacket(t, gosnmp.Version2c, "public", gosnmp.GetBulkRequest, 1, 2, base+".2", base+".2"))
		last := p.Variables[len(p.Variables)-1].Name
		askFrom(t, r, a, reqPacket(t, gosnmp.Version2c, "public", gosnmp.GetNextRequest, 0, 0, base)) // another walk
		p = askFrom(t, r, a, reqPacket(t, gosnmp.Version2c, "public", gosnmp.GetBulkRequest, 1, 2, base+".2", last))
		for _, v := range p.Variables {
			if got := gosnmp.ToBigInt(v.Value).Uint64(); got != 1 {
				t.Errorf("%s from moment %d, want the walk's 1", v.Name, got)
			}
		}
		if current(src) != 2 {
			t.Errorf("%d moments made, want 2", current(src))
		}
	})
}

// A request answered endOfMibView ends no walk there: the same request
// again (a manager reading a table that was empty, again and again) is
// answered from the current moment each time, not the first one's.
func TestEndOfMibViewContinuesNoWalk(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := moments()
		r := newWalkResponder(t, src)
		a := netip.MustParseAddrPort("127.0.0.1:4000")
		past := base + ".4" // after everything served
		for i, req := range [][]byte{
			reqPacket(t, gosnmp.Version2c, "public", gosnmp.GetNextRequest, 0, 0, past),
			reqPacket(t, gosnmp.Version2c, "public", gosnmp.GetNextRequest, 0, 0, past),
			reqPacket(t, gosnmp.Version2c, "public", gosnmp.GetBulkRequest, 0, 3, past),
			reqPacket(t, gosnmp.Version2c, "public", gosnmp.GetBulkRequest, 1, 3, past, past),
		} {
			_, before := src.Counts()
			p := askFrom(t, r, a, req)
			if len(p.Variables) == 0 || p.Variables[0].Type != gosnmp.EndOfMibView {
				t.Fatalf("request %d: %v, want endOfMibView", i+1, p.Variables)
			}
			if _, fresh := src.Counts(); fresh != before+1 {
				t.Errorf("request %d (from %s after an endOfMibView there) answered from an earlier moment, want the current one", i+1, past)
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
}

// Past the walks' budget the older walk goes on from the current moment,
// and Counts says so.
func TestWalkFallsBackPastTheBudget(t *testing.T) {
	src := moments()
	src.Bytes = 20 << 20
	r, err := NewWithSource(Config{Community: "public", Listen: "127.0.0.1:0", WalkBudget: 30 << 20}, src.Source(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	a, b := netip.MustParseAddrPort("127.0.0.1:1000"), netip.MustParseAddrPort("127.0.0.1:2000")
	start := reqPacket(t, gosnmp.Version2c, "public", gosnmp.GetNextRequest, 0, 0, base+".2")
	pa := askFrom(t, r, a, start)
	askFrom(t, r, b, start)
	if n := r.Stats().Snapshot().WalkFallbacks; n != 1 {
		t.Fatalf("two walks of 20 MiB in a budget of 30: %d fell back, want 1", n)
	}
	// a's walk goes on, from a new current moment (the third).
	askFrom(t, r, a, reqPacket(t, gosnmp.Version2c, "public", gosnmp.GetNextRequest, 0, 0, strings.TrimPrefix(pa.Variables[0].Name, ".")))
	if n := current(src); n != 3 {
		t.Errorf("a's next request made moment %d, want 3 (the current one)", n)
	}
}

// With Config.SharedWalks the budget is one for this responder and the
// other front ends sharing it (here a second responder stands for the
// AgentX session): a walk on one makes the other's older walk fall back,
// counted in that other's Counts, while each alone is within the budget.
func TestWalksShareTheFrontEndsBudget(t *testing.T) {
	src := moments()
	src.Bytes = 20 << 20
	shared := asn1tree.NewWalkBudget(30 << 20)
	newR := func() *Responder {
		r, err := NewWithSource(Config{Community: "public", Listen: "127.0.0.1:0", SharedWalks: shared}, src.Source(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	one, two := newR(), newR()
	a := netip.MustParseAddrPort("127.0.0.1:1000")
	start := reqPacket(t, gosnmp.Version2c, "public", gosnmp.GetNextRequest, 0, 0, base+".2")
	askFrom(t, one, a, start)
	askFrom(t, two, a, start)
	if n1, n2 := one.Stats().Snapshot().WalkFallbacks, two.Stats().Snapshot().WalkFallbacks; n1 != 1 || n2 != 0 {
		t.Fatalf("a walk of 20 MiB on each front end, 30 MiB for both: fell back %d and %d, want 1 (the older, first front end's) and 0", n1, n2)
	}
	if got := shared.PinnedBytes(); got != 20<<20 {
		t.Errorf("the shared budget holds %d bytes, want one moment's %d", got, 20<<20)
	}
}
