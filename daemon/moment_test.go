package daemon

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/spmi"
)

// readings serves Proc/n: the number of its readings.
type readings struct{ n uint64 }

func (*readings) Name() string { return "Proc" }
func (r *readings) Collect(b *spmi.Builder) error {
	r.n++
	cx, err := b.Context(nil, &spmi.CxDesc{Name: "Proc", Descr: "Processes", ASN: spmi.ASNProc})
	if err != nil {
		return err
	}
	return b.Stat(cx, &spmiwire.StatDesc{Name: "n", Descr: "readings", ASN: 1, Val: ddswire.SiQuantity}, spmiwire.Uint(r.n))
}

// A walk whose first request waited for a context read apart (it sat
// unread) goes on in that reading: the moment follows its answer.
func TestWalkGoesOnInTheReadingItsFirstRequestWaitedFor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := asn1tree.MustParse("1.3.6.1.4.1.32473.1")
		h := spmi.NewHierarchy(spmi.Config{Base: base, MinAge: time.Second, WarmFor: time.Minute,
			MaxAge: map[string]time.Duration{"Proc": 30 * time.Second}})
		h.Add(&readings{})
		h.Refresh()
		time.Sleep(5 * time.Minute)
		old := h.Current()
		m := &moment{snap: old}
		first := m.answer(500 * time.Millisecond)
		o, v, ok := first.Search(base, false, nil)
		if !ok || v.Num != 2 {
			t.Fatalf("first request: %v %v %v, want the reading it waited for (2)", o, v, ok)
		}
		next := m.answer(500 * time.Millisecond)
		if next.Snapshot() != first.Moved() || next.Snapshot() == old {
			t.Fatal("the walk's next request is not answered from the reading its first one waited for")
		}
	})
}
