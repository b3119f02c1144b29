package spmi

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
)

// BenchmarkBuild100k measures one refresh's tree work at scale: 1,000
// instances of 100 statistics added to a Builder and published as a
// Snapshot with its view.
func BenchmarkBuild100k(b *testing.B) {
	procCx := CxDesc{Name: "Proc", Descr: "Processes", ASN: 10, Inst: ddswire.SiContInst}
	tpl := CxDesc{Descr: "Process"}
	stats := make([]spmiwire.StatDesc, 100)
	for i := range stats {
		stats[i] = spmiwire.StatDesc{Name: fmt.Sprintf("s%d", i), Descr: "x", ASN: uint32(i + 1), Val: ddswire.SiCounter}
	}
	names := make([]string, 1000)
	for i := range names {
		names[i] = fmt.Sprint(i*7 + 1)
	}
	vals := make([]spmiwire.Value, 100)
	for i := range vals {
		vals[i] = spmiwire.Uint(uint64(i))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		bl := NewBuilder(testBase, nil, time.Now())
		p, _ := bl.Context(nil, &procCx)
		for j, n := range names {
			inst, err := bl.Instance(p, &tpl, n, "", uint32(j*7+1))
			if err != nil {
				b.Fatal(err)
			}
			if err := bl.Stats(inst, stats, vals); err != nil {
				b.Fatal(err)
			}
		}
		if s := bl.Finish(); s.NumStats != 100000 {
			b.Fatal(s.NumStats)
		}
	}
}

// wide100k is a provider of 1,000 instances of 100 statistics.
type wide100k struct{}

func (wide100k) Name() string { return "Proc" }
func (wide100k) Collect(bl *Builder) error {
	procCx := CxDesc{Name: "Proc", Descr: "Processes", ASN: 10, Inst: ddswire.SiContInst}
	tpl := CxDesc{Descr: "Process"}
	p, err := bl.Context(nil, &procCx)
	if err != nil {
		return err
	}
	for j := range 1000 {
		inst, err := bl.Instance(p, &tpl, fmt.Sprint(j*7+1), "", uint32(j*7+1))
		if err != nil {
			return err
		}
		for i := range 100 {
			if err := bl.Stat(inst, &spmiwire.StatDesc{Name: fmt.Sprintf("s%d", i), Descr: "x", ASN: uint32(i + 1), Val: ddswire.SiCounter}, spmiwire.Uint(uint64(i))); err != nil {
				return err
			}
		}
	}
	return nil
}

// BenchmarkGet100k compares an SNMP front end's Get on a young snapshot
// (idle) with one after the minimum age, when every request finds the
// snapshot stale and a rebuild of 100,000 statistics is due or under way
// (stale): with snmp_wait 0 it must not wait for it.
func BenchmarkGet100k(b *testing.B) {
	benchGet(b, func() Provider { return wide100k{} }, testBase.Append(10, 701, 50, 0))
}

// benchGet measures a front end's Get of oid from a hierarchy of the
// provider made by p, idle (a young snapshot) and stale (every request
// finds a refresh due).
func benchGet(b *testing.B, p func() Provider, oid asn1tree.OID) {
	for _, c := range []struct {
		name   string
		minAge time.Duration
	}{{"idle", time.Hour}, {"stale", 0}} {
		b.Run(c.name, func(b *testing.B) {
			h := NewHierarchy(Config{Base: testBase, MinAge: c.minAge})
			h.Add(p())
			h.Refresh()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, ok := h.FreshWithin(0).View().Get(oid); !ok {
					b.Fatal("no value")
				}
			}
			b.StopTimer()
			h.Fresh() // let a rebuild in flight finish before the next run
		})
	}
}

// liveWords is a LiveSource over a supplier's values: each pin copies
// them, as DDS copies a data area.
type liveWords struct{ words []uint64 }

func (l *liveWords) Pin() LivePin { return wordsPin(slices.Clone(l.words)) }

type wordsPin []uint64

func (p wordsPin) Value(i uint32) spmiwire.Value { return spmiwire.Uint(p[i]) }

// live100k is a StableProvider of 100 suppliers of 10 instances of 100
// live statistics (100,000), as the DDS provider adds them: a block per
// instance sharing one slice of descriptions, or with nodes a node per
// statistic (LiveStat).
type live100k struct {
	srcs  []*liveWords
	ds    []spmiwire.StatDesc
	blk   *Block
	nodes bool
}

func newLive100k() *live100k {
	l := &live100k{}
	for range 100 {
		l.srcs = append(l.srcs, &liveWords{words: make([]uint64, 1000)})
	}
	for i := range 100 {
		l.ds = append(l.ds, spmiwire.StatDesc{Name: fmt.Sprintf("s%d", i), Descr: "x", ASN: uint32(i + 1), Val: ddswire.SiCounter})
	}
	l.blk, _ = NewBlock(l.ds)
	return l
}

func (*live100k) Name() string { return "DDS" }
func (*live100k) Shape() any   { return 1 }
func (l *live100k) Collect(bl *Builder) error {
	root, err := bl.Context(nil, &CxDesc{Name: "DDS", Descr: "Suppliers", ASN: 99, Inst: ddswire.SiContInst})
	if err != nil {
		return err
	}
	tpl := CxDesc{Descr: "Supplier"}
	for s, src := range l.srcs {
		for j := range 10 {
			k := s*10 + j
			inst, err := bl.Instance(root, &tpl, fmt.Sprint(k+1), "", uint32(k+1))
			if err != nil {
				return err
			}
			if !l.nodes {
				if err := bl.LiveBlock(inst, l.blk, src, uint32(j*100)); err != nil {
					return err
				}
				continue
			}
			for i := range l.ds {
				if err := bl.LiveStat(inst, &l.ds[i], src, uint32(j*100+i)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// BenchmarkRefreshUnchanged100k is a refresh when the structure of
// 100,000 live statistics did not change: the part is reused, nothing is
// copied. Compare BenchmarkBuild100k, the rebuild it used to be.
func BenchmarkRefreshUnchanged100k(b *testing.B) {
	h := NewHierarchy(Config{Base: testBase})
	h.Add(newLive100k())
	if s := h.Refresh(); s.NumStats != 100000 {
		b.Fatal(s.NumStats)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		h.Refresh()
	}
}

// BenchmarkGetLive100k is an SNMP Get of a live statistic among 100,000
// (a pin of its supplier's 1,000 values per request), on a young snapshot
// (idle) and after the minimum age (stale), when every request finds a
// refresh due: it must not wait for it.
func BenchmarkGetLive100k(b *testing.B) {
	benchGet(b, func() Provider { return newLive100k() }, testBase.Append(99, 701, 50, 0))
}

// BenchmarkBulkLive100k is the work of one GetBulk of 30 live statistics
// among 100,000: 30 searches of one Answer, as the front ends make them.
func BenchmarkBulkLive100k(b *testing.B) {
	h := NewHierarchy(Config{Base: testBase})
	h.Add(newLive100k())
	s := h.Refresh()
	start := testBase.Append(99, 500)
	b.ReportAllocs()
	for b.Loop() {
		a := s.Answer()
		o, n := start, 0
		for range 30 {
			var ok bool
			if o, _, ok = a.Search(o, false, nil); !ok {
				b.Fatal("walk ended")
			}
			n++
		}
		a.Release()
	}
}

// hostLike is a provider of the host's cheap contexts: 12 of 50
// statistics.
type hostLike struct{}

func (hostLike) Name() string { return "CPU" }
func (hostLike) Collect(bl *Builder) error {
	for c := range 12 {
		cx, err := bl.Context(nil, &CxDesc{Name: fmt.Sprintf("C%d", c), Descr: "x", ASN: uint32(c + 1)})
		if err != nil {
			return err
		}
		for i := range 50 {
			if err := bl.Stat(cx, &spmiwire.StatDesc{Name: fmt.Sprintf("s%d", i), Descr: "x", ASN: uint32(i + 1), Val: ddswire.SiCounter}, spmiwire.Uint(uint64(i))); err != nil {
				return err
			}
		}
	}
	return nil
}

// procs5k is Proc with 5,000 processes of 20 statistics.
type procs5k struct{}

func (procs5k) Name() string { return "Proc" }
func (procs5k) Collect(bl *Builder) error {
	p, err := bl.Context(nil, &CxDesc{Name: "Proc", Descr: "Processes", ASN: 50, Inst: ddswire.SiContInst})
	if err != nil {
		return err
	}
	stats := make([]spmiwire.StatDesc, 20)
	vals := make([]spmiwire.Value, 20)
	for i := range stats {
		stats[i], vals[i] = spmiwire.StatDesc{Name: fmt.Sprintf("s%d", i), Descr: "x", ASN: uint32(i + 1), Val: ddswire.SiCounter}, spmiwire.Uint(uint64(i))
	}
	for j := range 5000 {
		inst, err := bl.Instance(p, &CxDesc{Descr: "Process"}, fmt.Sprint(j+1), "", uint32(j+1))
		if err != nil {
			return err
		}
		if err := bl.Stats(inst, stats, vals); err != nil {
			return err
		}
	}
	return nil
}

// BenchmarkGetWhenValuesAreOld is an SNMP Get of a cheap statistic on a
// host with 100,000 DDS statistics and 5,000 processes (Proc read apart),
// with the shipped wait: "fresh" finds the values young, "old" finds them
// older than the minimum age at every request and waits for the cheap
// contexts to be read again, "cheap-read" is that reading alone (a
// hierarchy of the cheap contexts only). Old should cost the cheap read
// plus little: the DDS and Proc parts are reused, not waited for.
func BenchmarkGetWhenValuesAreOld(b *testing.B) {
	oid := testBase.Append(3, 7, 0)
	for _, c := range []struct {
		name   string
		minAge time.Duration
		only   bool
	}{{"fresh", time.Hour, false}, {"old", time.Nanosecond, false}, {"cheap-read", time.Nanosecond, true}} {
		b.Run(c.name, func(b *testing.B) {
			h := NewHierarchy(Config{Base: testBase, MinAge: c.minAge, MaxAge: map[string]time.Duration{"Proc": time.Hour}})
			h.Add(hostLike{})
			if !c.only {
				h.Add(newLive100k())
				h.Add(procs5k{})
			}
			h.Refresh()
			b.ReportAllocs()
			for b.Loop() {
				if c.only {
					h.Refresh()
					continue
				}
				if _, ok := h.FreshWithin(500 * time.Millisecond).View().Get(oid); !ok {
					b.Fatal("no value")
				}
			}
		})
	}
}
