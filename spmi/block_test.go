package spmi

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
)

// heapPerStat is the live heap a hierarchy of p's statistics holds, per
// statistic.
func heapPerStat(t testing.TB, p *live100k) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	h := NewHierarchy(Config{Base: testBase})
	h.Add(p)
	s := h.Refresh()
	runtime.GC()
	runtime.ReadMemStats(&after)
	if s.NumStats != 100000 || s.ViewLen() < 200000 {
		t.Fatalf("%d statistics, %d view entries", s.NumStats, s.ViewLen())
	}
	runtime.KeepAlive(s)
	return float64(after.HeapAlloc-before.HeapAlloc) / 100000
}

// Statistics added as blocks cost no node, no stored OID and no stored
// value each: the part holds two 16-byte view entries per statistic (its
// scalar and its cell). A node per statistic cost about 700 bytes.
func TestBlocksCostLittleMemory(t *testing.T) {
	p := newLive100k()
	blocks := heapPerStat(t, p)
	p.nodes = true
	nodes := heapPerStat(t, p)
	t.Logf("live heap per statistic: %.0f B in blocks, %.0f B as nodes", blocks, nodes)
	if blocks > 64 || blocks*5 > nodes {
		t.Fatalf("blocks hold %.0f B a statistic (nodes %.0f B), want at most 64 and a fifth", blocks, nodes)
	}
}

// BenchmarkBuildLive100k builds the part of 100,000 live statistics,
// as blocks and as nodes, and reports the heap each holds per statistic.
func BenchmarkBuildLive100k(b *testing.B) {
	for _, nodes := range []bool{false, true} {
		name := map[bool]string{false: "blocks", true: "nodes"}[nodes]
		b.Run(name, func(b *testing.B) {
			p := newLive100k()
			p.nodes = nodes
			b.ReportAllocs()
			for range b.N {
				bl := NewBuilder(testBase, nil, time.Now())
				if err := p.Collect(bl); err != nil {
					b.Fatal(err)
				}
				bl.finishPart(1)
			}
			b.StopTimer()
			b.ReportMetric(heapPerStat(b, p), "heap-B/stat")
		})
	}
}

// A block serves and finds the same statistics as nodes would: by OID in
// both views, by path, as peers, in walks and peeks; and it refuses what
// would clash.
func TestBlocksServeAsNodes(t *testing.T) {
	p := newLive100k()
	p.srcs[3].words[1*100+41] = 77 // supplier 3, its second instance (32), statistic s41
	hb := NewHierarchy(Config{Base: testBase})
	hb.Add(p)
	sb := hb.Refresh()
	q := newLive100k()
	q.nodes = true
	q.srcs[3].words[1*100+41] = 77
	hn := NewHierarchy(Config{Base: testBase})
	hn.Add(q)
	sn := hn.Refresh()
	a, b := sb.Values(), sn.Values()
	if a.Len() != b.Len() || a.Len() != 200000+2*1000 {
		t.Fatalf("blocks serve %d entries, nodes %d", a.Len(), b.Len())
	}
	for i := range a.Len() {
		oa, va := a.At(i)
		ob, vb := b.At(i)
		if asn1tree.Compare(oa, ob) != 0 || va.Kind != vb.Kind || va.Num != vb.Num || va.Str != vb.Str {
			t.Fatalf("entry %d: blocks %s=%v, nodes %s=%v", i, oa, va, ob, vb)
		}
	}
	// s41 has ASN 42.
	n, err := sb.Lookup("DDS/32/s41")
	if err != nil || n.Current().Uint64() != 77 || n.ASN != 42 || n.Path != "DDS/32/s41" || n.Rel.String() != "99.32.42" {
		t.Fatalf("lookup: %+v %v", n, err)
	}
	if got, want := n.Cell(), testBase.Append(TableEntry(0, asn1tree.OID{99})...).Append(ColumnOffset+42, 32); asn1tree.Compare(got, want) != 0 {
		t.Fatalf("cell %s, want %s", got, want)
	}
	if v, ok := sb.View().Get(n.Cell()); !ok || v.Num != 77 {
		t.Fatalf("cell value %v %v", v, ok)
	}
	peers, err := sb.Peers("DDS", "s41")
	if err != nil || len(peers) != 1000 || peers[31].Path != "DDS/32/s41" {
		t.Fatalf("peers: %d %v", len(peers), err)
	}
	ea, _ := Peek(sb, "DDS/32")
	eb, _ := Peek(sn, "DDS/32")
	if len(ea) != 101 || len(ea) != len(eb) {
		t.Fatalf("peek: %d entries, nodes %d", len(ea), len(eb))
	}
	for i := range ea {
		if ea[i].Path != eb[i].Path || ea[i].OID != eb[i].OID || ea[i].Cell != eb[i].Cell {
			t.Fatalf("peek %d: %+v, nodes %+v", i, ea[i], eb[i])
		}
	}
	if _, err := sb.Lookup("DDS/32/s100"); err == nil {
		t.Fatal("found a statistic that is not in the block")
	}
}

func TestBlockRefusals(t *testing.T) {
	src := &liveWords{words: make([]uint64, 4)}
	ds := []spmiwire.StatDesc{{Name: "a", ASN: 1, Val: ddswire.SiCounter}, {Name: "b", ASN: 3, Val: ddswire.SiCounter}}
	blk, err := NewBlock(ds)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		do   func(b *Builder, cx *Node) error
		want string
	}{
		{"unsorted", func(b *Builder, cx *Node) error {
			_, err := NewBlock([]spmiwire.StatDesc{ds[1], ds[0]})
			return err
		}, "does not follow"},
		{"same name", func(b *Builder, cx *Node) error {
			_, err := NewBlock([]spmiwire.StatDesc{ds[0], {Name: "a", ASN: 2, Val: ddswire.SiCounter}})
			return err
		}, "twice"},
		{"second block", func(b *Builder, cx *Node) error {
			b.LiveBlock(cx, blk, src, 0)
			return b.LiveBlock(cx, blk, src, 2)
		}, "already has"},
		{"context after block", func(b *Builder, cx *Node) error {
			b.LiveBlock(cx, blk, src, 0)
			_, err := b.Context(cx, &CxDesc{Name: "sub", ASN: 3})
			return err
		}, `already used by "b"`},
		{"block after statistic", func(b *Builder, cx *Node) error {
			b.Stat(cx, &spmiwire.StatDesc{Name: "b", ASN: 9, Val: ddswire.SiQuantity}, spmiwire.Int(1))
			return b.LiveBlock(cx, blk, src, 0)
		}, "clashes"},
		{"no source", func(b *Builder, cx *Node) error { return b.LiveBlock(cx, blk, nil, 0) }, "no live source"},
		{"bad description", func(b *Builder, cx *Node) error {
			_, err := NewBlock([]spmiwire.StatDesc{{Name: "", ASN: 1}})
			return err
		}, "empty"},
		{"overflow", func(b *Builder, cx *Node) error { return b.LiveBlock(cx, blk, src, ^uint32(0)) }, "overflow"},
	}
	for _, c := range cases {
		b := NewBuilder(testBase, nil, time.Now())
		cx, _ := b.Context(nil, &CxDesc{Name: "X", ASN: 5})
		err := c.do(b, cx)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}
