package agentx

import (
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/asn1tree/walktest"
	"github.com/perfagent/subagent/snmpreq"
)

// moments is the source of the walk tests: moment n's table is
// 20.1.<column>.<row>, columns 2 and 3, rows n to n+4.
func moments() *walktest.Moments {
	return &walktest.Moments{Table: b("20.1"), Cols: []uint32{2, 3},
		Extra: []asn1tree.Entry[asn1tree.Value]{{OID: b("30.0"), Val: asn1tree.Int(-1)}}}
}

// walker plays the master for managers' requests to one session: each
// request is a transaction of its own.
type walker struct {
	t   *testing.T
	r   *responder
	tid uint32
}

// walkTable walks the table column after column, as snmptable does
// through snmpd: each manager request a transaction of passes GetNext
// PDUs (the master's way with a GetBulk of that many repetitions), or of
// one GetBulk PDU when bulk. between runs after each request. It returns
// the cells by "column.row" with their values, and the number of requests.
func (w *walker) walkTable(passes int, bulk bool, between func()) (map[string]uint64, int) {
	t := w.t
	t.Helper()
	table := b("20.1")
	cells := map[string]uint64{}
	next := b("20")
	for reqs := 1; reqs <= 100; reqs++ {
		w.tid++
		var vbs []varbind
		if bulk {
			p := ask(t, w.r, &packet{header: header{version: 1, typ: typeGetBulk, transactionID: w.tid},
				maxRepetitions: uint16(passes), ranges: []searchRange{{start: next}}})
			vbs = p.varbinds
		} else {
			from := next
			for range passes {
				p := ask(t, w.r, &packet{header: header{version: 1, typ: typeGetNext, transactionID: w.tid},
					ranges: []searchRange{{start: from}}})
				vbs = append(vbs, p.varbinds...)
				from = p.varbinds[0].name
			}
		}
		between()
		for _, vb := range vbs {
			if !vb.name.HasPrefix(table) {
				return cells, reqs
			}
			cells[strings.TrimPrefix(vb.name.String(), table.String()+".")] = vb.num
			next = vb.name
		}
	}
	t.Fatal("the walk does not end")
	return nil, 0
}

// A manager's walk across transactions is answered from its first
// request's moment, while another manager's requests through the same
// session make new moments; a new walk gets the current moment. Another
// session never continues it.
func TestWalkAnsweredFromOneMoment(t *testing.T) {
	for _, c := range []struct {
		name   string
		passes int
		bulk   bool
	}{{"GetNext", 1, false}, {"GetBulk as passes of GetNext", 3, false}, {"GetBulk", 4, true}} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := moments()
				var walks asn1tree.Walks[uint64]
				r := walkResponder(subtreeScope(testSubtrees...), src.Source(t), &walks, 1)
				w := &walker{t: t, r: r}
				other := func() {
					w.tid++ // another manager, behind the same master
					ask(t, r, &packet{header: header{version: 1, typ: typeGetNext, transactionID: w.tid}, ranges: []searchRange{{start: b("20")}}})
					time.Sleep(time.Second)
				}
				for round := range 2 {
					cur, before := src.Counts()
					cells, reqs := w.walkTable(c.passes, c.bulk, other)
					src.CheckOneMoment(t, fmt.Sprintf("walk %d", round+1), cells, cur+1)
					if _, fresh := src.Counts(); reqs < 3 || fresh-before != reqs+1 {
						t.Errorf("%d current moments for a walk of %d requests, want 1 for it and %d for the other's", fresh-before, reqs, reqs)
					}
				}

				// The same request in another session starts a walk.
				w.tid++
				first := ask(t, r, &packet{header: header{version: 1, typ: typeGetNext, transactionID: w.tid}, ranges: []searchRange{{start: b("20")}}})
				cur, _ := src.Counts()
				w.tid++
				p := ask(t, r, &packet{header: header{version: 1, typ: typeGetNext, transactionID: w.tid}, ranges: []searchRange{{start: first.varbinds[0].name}}})
				if p.varbinds[0].num != cur {
					t.Fatalf("the walk goes on from moment %d, want %d", p.varbinds[0].num, cur)
				}
				r2 := walkResponder(r.scope, r.moments.Src, &walks, 2)
				p = ask(t, r2, &packet{header: header{version: 1, typ: typeGetNext, transactionID: w.tid + 1}, ranges: []searchRange{{start: p.varbinds[0].name}}})
				if p.varbinds[0].num != cur+1 {
					t.Errorf("another session's request from moment %d, want the fresh %d", p.varbinds[0].num, cur+1)
				}
			})
		})
	}
}

// Through a Subagent: a walk goes on across transactions within a session
// but not into the next session, and DataAge tells how old the data of
// the last answer was.
func TestSubagentWalksPerSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newPipeMaster(t)
		cfg := testConfig(m.addr)
		src := moments()
		r := startSourceOn(t, m, cfg, src.Source(t))
		c := m.accept()
		c.handshake(cfg)
		settled(t, "Connected", r.sa.Connected)
		next := func(c *masterConn, tid uint32, from asn1tree.OID) varbind {
			p := c.ask(&packet{header: header{typ: typeGetNext, flags: flagNetworkByteOrder, transactionID: tid},
				ranges: []searchRange{{start: from}}})
			return p.varbinds[0]
		}
		vb := next(c, 1, b("20"))
		time.Sleep(2 * time.Second)
		if vb = next(c, 2, vb.name); vb.num != 1 {
			t.Fatalf("the walk's second request from moment %d, want 1", vb.num)
		}
		if last, largest := r.sa.DataAge(); last != 2*time.Second || largest != 2*time.Second {
			t.Errorf("data age %v, largest %v; the walk's moment is 2 s old", last, largest)
		}
		c.c.Close()
		c = m.accept()
		c.handshake(cfg)
		settled(t, "Connected", r.sa.Connected)
		if vb = next(c, 3, vb.name); vb.num != 2 {
			t.Fatalf("a new session's request from moment %d, want the fresh 2", vb.num)
		}
		if last, largest := r.sa.DataAge(); last != 0 || largest != 2*time.Second {
			t.Errorf("data age %v, largest %v, want 0 and 2 s", last, largest)
		}
	})
}

// A request answered endOfMibView ends no walk there: the same request
// again (a manager reading a table that was empty, again and again) is
// answered from the current moment each time, not the first one's.
func TestEndOfMibViewContinuesNoWalk(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := moments()
		var walks asn1tree.Walks[uint64]
		r := walkResponder(subtreeScope(testSubtrees...), src.Source(t), &walks, 1)
		past := b("31") // after everything served
		for i, req := range []*packet{
			{header: header{version: 1, typ: typeGetNext, transactionID: 1}, ranges: []searchRange{{start: past}}},
			{header: header{version: 1, typ: typeGetNext, transactionID: 2}, ranges: []searchRange{{start: past}}},
			{header: header{version: 1, typ: typeGetBulk, transactionID: 3}, maxRepetitions: 3, ranges: []searchRange{{start: past}}},
			{header: header{version: 1, typ: typeGetBulk, transactionID: 4}, maxRepetitions: 3, ranges: []searchRange{{start: past}}},
		} {
			_, before := src.Counts()
			p := ask(t, r, req)
			if len(p.varbinds) == 0 || p.varbinds[0].typ != vbEndOfMibView {
				t.Fatalf("request %d: %v, want endOfMibView", i+1, p.varbinds)
			}
			if _, fresh := src.Counts(); fresh != before+1 {
				t.Errorf("request %d (%s from %s after an endOfMibView there) answered from an earlier moment, want the current one", i+1, req.typ, past)
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
}

// walkResponder is a session's responder keeping walks as peer.
func walkResponder(sc *scope, src asn1tree.Source, walks *asn1tree.Walks[uint64], peer uint64) *responder {
	return &responder{scope: sc, moments: snmpreq.Moments[uint64]{Src: src, Walks: walks}, peer: peer}
}
