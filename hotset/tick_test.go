package hotset

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/spmi"
)

// gatedDDS is a stable provider (as the DDS suppliers are) whose shape
// is the number it serves; once gate is set, a rebuild of a new shape
// waits for it to close.
type gatedDDS struct {
	shape atomic.Int64
	gate  atomic.Pointer[chan struct{}]
}

func (p *gatedDDS) Name() string { return "DDS" }
func (p *gatedDDS) Shape() any   { return p.shape.Load() }
func (p *gatedDDS) Collect(b *spmi.Builder) error {
	if g := p.gate.Load(); g != nil {
		<-*g
	}
	c, err := b.Context(nil, &spmi.CxDesc{Name: "DDS", Descr: "DDS", ASN: 99})
	if err != nil {
		return err
	}
	return b.Stat(c, &spmiwire.StatDesc{Name: "shape", Descr: "the shape read", ASN: 1, Val: ddswire.SiQuantity}, spmiwire.Uint(uint64(p.shape.Load())))
}

// An evaluation does not wait for a part of the tree whose structure
// changed (a supplier registered or left; with 40 a second, waiting made
// evaluations as late as the rebuilds): it evaluates fresh values of the
// rest at once, and the new structure at the next evaluation.
func TestTickDoesNotWaitForStructuralRebuilds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake()
		disks(f, map[string]uint64{"sda": 0}, map[string]int64{"sda": 9})
		dds := &gatedDDS{}
		dds.shape.Store(1)
		e, err := New([]Def{{Name: "qlen", GrandParent: "Disk", Stat: "qlen", MaxResp: 1, Threshold: 5,
			Frequency: 5 * time.Minute, Feed: FeedThreshold, Excp: ExcpBoth, Severity: 4, TrapNo: 9}}, 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		h := spmi.NewHierarchy(spmi.Config{Base: testBase, MinAge: time.Second})
		h.Add(f)
		h.Add(dds)
		h.Refresh()
		gate := make(chan struct{})
		dds.gate.Store(&gate)
		dds.shape.Store(2) // a supplier registered
		time.Sleep(time.Second)
		before := f.collects
		got := make(chan []Event)
		go func() { got <- e.Tick(h) }()
		synctest.Wait()
		select {
		case evs := <-got:
			if len(evs) != 1 || f.collects != before+1 {
				t.Errorf("events %+v, %d readings of the disks; want sda's event on fresh values", evs, f.collects-before)
			}
		default:
			t.Error("the evaluation waited for the rebuild of a part whose structure changed")
			close(gate)
			<-got
			return
		}
		close(gate)
		synctest.Wait()
		if n, err := h.Fresh().Lookup("DDS/shape"); err != nil || n.Value.String() != "2" {
			t.Errorf("after the rebuild DDS/shape is %v (%v), want 2", n, err)
		}
	})
}
