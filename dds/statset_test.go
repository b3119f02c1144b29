//go:build linux

package dds

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmierr"
)

// unorderedInit registers statistics in neither ASN nor name order: the
// permanent context DDS/Acme/P has c (ASN 1), a (2), b (3) registered as
// b, c, a; the template's are z (10), x (20), y (30) registered as y, z, x.
// Each statistic's field is 8 bytes at 0, 8, 16 in registration order.
func unorderedInit() *ddswire.Init {
	st := func(name string, asn, off uint32) ddswire.Stat {
		return ddswire.Stat{Name: name, Descr: "statistic " + name, Max: 1 << 40, DataType: ddswire.SiLong, ASN: asn, Size: 8, Offset: off, Type: ddswire.SiULong}
	}
	return &ddswire.Init{Version: ddswire.ProtoMajor, AreaLen: 4096, PermLen: 24, Contexts: []ddswire.Cx{
		{Path: "DDS/Acme", Descr: "Acme", ASN: 7},
		{Path: "DDS/Acme/P", Descr: "permanent", ASN: 1, Stats: []ddswire.Stat{st("b", 3, 0), st("c", 1, 8), st("a", 2, 16)}},
	}, Templates: []ddswire.Cx{
		{Path: "DDS/Acme/T", Descr: "template", ASN: 1, DataSize: 24, Stats: []ddswire.Stat{st("y", 30, 0), st("z", 10, 8), st("x", 20, 16)}},
	}}
}

func viewOf(t *testing.T, s *Server, path string) *cxView {
	t.Helper()
	for _, v := range *s.reg.view.Load() {
		if v.path == path {
			return &v
		}
	}
	t.Fatalf("%s: not in the registry's view", path)
	return nil
}

func TestStatSetSortsByASNAndIndexesNames(t *testing.T) {
	in := unorderedInit()
	set, err := newStatSet(in.Contexts[1].Stats)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for j := range set.len() {
		d := set.blk.At(j)
		got = append(got, fmt.Sprintf("%s:%d@%d", d.Name, d.ASN, set.fields[j].Off))
	}
	if want := []string{"c:1@8", "a:2@16", "b:3@0"}; !slices.Equal(got, want) {
		t.Fatalf("sorted %v, want %v", got, want)
	}
	if in.Contexts[1].Stats[0].Name != "b" {
		t.Fatal("the registration's statistics were reordered")
	}
	for _, name := range []string{"a", "b", "c"} {
		if !set.hasName(name) {
			t.Errorf("%s not found by name", name)
		}
	}
	for _, asn := range []uint32{1, 2, 3} {
		if !set.hasASN(asn) {
			t.Errorf("%d not found by number", asn)
		}
	}
	if set.hasName("d") || set.hasName("") || set.hasASN(0) || set.hasASN(4) {
		t.Error("found a statistic that is not there")
	}
	var none *statSet
	if empty, err := newStatSet(nil); none.len() != 0 || none.hasName("a") || none.hasASN(1) || empty != nil || err != nil {
		t.Error("no statistics, yet some found")
	}
}

// The instances of a template share its descriptions: one slice, whose
// backing array the tree is built from, and no map of their own.
func TestInstancesShareTheirTemplatesDescriptions(t *testing.T) {
	s, h := testServer(t, nil)
	ts := newSupFile(t, unorderedInit())
	ts.register(s, spmierr.SiSuccess)
	ts.must(&ddswire.AddCx{Path: "DDS/Acme/I1", Descr: "one", ASN: 11}, -1, spmierr.SiSuccess)
	ts.must(&ddswire.AddCx{Path: "DDS/Acme/I2", Descr: "two", ASN: 12}, -1, spmierr.SiSuccess)
	a, b := viewOf(t, s, "DDS/Acme/I1"), viewOf(t, s, "DDS/Acme/I2")
	if a.stats == nil || a.stats != b.stats || a.stats.blk.At(0) != b.stats.blk.At(0) || &a.stats.fields[0] != &b.stats.fields[0] {
		t.Fatal("two instances of one template have their own descriptions")
	}
	if p := viewOf(t, s, "DDS/Acme/P"); p.stats == a.stats {
		t.Fatal("a permanent context shares the template's descriptions")
	}
	// Rebuilding the tree keeps using the same ones.
	lookup(h, "DDS/Acme/I1/x")
	if c := viewOf(t, s, "DDS/Acme/I1"); c.stats.blk.At(0) != a.stats.blk.At(0) {
		t.Fatal("descriptions made again")
	}
	s.reg.mu.Lock()
	defer s.reg.mu.Unlock()
	for _, path := range []string{"DDS/Acme/I1", "DDS/Acme/I2", "DDS/Acme/P"} {
		if c := s.reg.cxs[path]; c.names != nil || c.asns != nil {
			t.Errorf("%s: a context without subcontexts has maps of names or numbers", path)
		}
	}
}

// The registry refuses an AddCx whose name or number is one of its
// parent's statistics or subcontexts; those of a deleted subcontext are
// free again, a statistic's never.
func TestAddCxClashesWithStatisticsAndSubcontexts(t *testing.T) {
	s, h := testServer(t, nil)
	ts := newSupFile(t, unorderedInit())
	ts.register(s, spmierr.SiSuccess)
	add := func(path string, asn uint32, want spmierr.Code, sub string) uint32 {
		t.Helper()
		r := ts.must(&ddswire.AddCx{Path: path, Descr: "x", ASN: asn}, -1, want)
		if !strings.Contains(r.Errmsg, sub) {
			t.Fatalf("AddCx %s (%d): %q does not say %q", path, asn, r.Errmsg, sub)
		}
		return uint32(r.Value)
	}
	name, num := "the name already exists in ", "ASN.1 number "
	// Statistics of a permanent context, and of an instance.
	add("DDS/Acme/P/a", 9, spmierr.SiDuplicate, name+"DDS/Acme/P")
	add("DDS/Acme/P/c", 9, spmierr.SiDuplicate, name+"DDS/Acme/P")
	add("DDS/Acme/P/X", 3, spmierr.SiDuplicate, num+"3 is already used in DDS/Acme/P")
	add("DDS/Acme/I1", 11, spmierr.SiSuccess, "")
	add("DDS/Acme/I1/y", 9, spmierr.SiDuplicate, name+"DDS/Acme/I1")
	add("DDS/Acme/I1/X", 10, spmierr.SiDuplicate, num+"10 is already used in DDS/Acme/I1")
	add("DDS/Acme/I1/X", 30, spmierr.SiDuplicate, num+"30 is already used in DDS/Acme/I1")
	// Subcontexts, of the vendor context and of an instance.
	add("DDS/Acme/P", 99, spmierr.SiDuplicate, name+"DDS/Acme")
	add("DDS/Acme/I2", 11, spmierr.SiDuplicate, num+"11 is already used in DDS/Acme")
	off := add("DDS/Acme/I1/X", 9, spmierr.SiSuccess, "")
	add("DDS/Acme/I1/X", 8, spmierr.SiDuplicate, name+"DDS/Acme/I1")
	add("DDS/Acme/I1/Y", 9, spmierr.SiDuplicate, num+"9 is already used in DDS/Acme/I1")
	ts.must(&ddswire.DelCx{Offset: off}, -1, spmierr.SiSuccess)
	add("DDS/Acme/I1/X", 8, spmierr.SiSuccess, "")
	add("DDS/Acme/I1/Y", 9, spmierr.SiSuccess, "")
	add("DDS/Acme/I1/z", 5, spmierr.SiDuplicate, name+"DDS/Acme/I1")
	add("DDS/Acme/I1/Z", 20, spmierr.SiDuplicate, num+"20 is already used in DDS/Acme/I1")
	if lookup(h, "DDS/Acme/I1/Y/x") == nil || lookup(h, "DDS/Acme/P/a") == nil {
		t.Fatal("statistics missing from the tree")
	}
	// A second supplier's Init context under the shared vendor context.
	other := unorderedInit()
	other.Contexts[1].Path = "DDS/Acme/Q"
	other.Contexts[1].ASN = 11
	ts2 := newSupFile(t, other)
	if r := ts2.register(s, spmierr.SiDuplicate); !strings.Contains(r.Errmsg, num+"11 is already used in DDS/Acme") {
		t.Fatalf("Init: %q", r.Errmsg)
	}
}

// Statistics registered out of ASN order are served in ASN order, each
// with its own field's value, through lookups, gets in any order and a
// walk, across contexts added and deleted.
func TestStatisticsOutOfASNOrderServeTheirOwnValues(t *testing.T) {
	s, h := testServer(t, nil)
	ts := newSupFile(t, unorderedInit())
	ts.register(s, spmierr.SiSuccess)
	// P's statistic numbered k holds 100+k; instance i's, 1000*i+k.
	ts.put(0, 103)
	ts.put(8, 101)
	ts.put(16, 102)
	slots := map[uint32]uint32{}
	for i := uint32(1); i <= 4; i++ {
		r := ts.must(&ddswire.AddCx{Path: fmt.Sprintf("DDS/Acme/I%d", i), Descr: "inst", ASN: 10 + i}, -1, spmierr.SiSuccess)
		slot := uint32(r.Value)
		slots[i] = slot
		ts.put(slot, 1000*uint64(i)+30)
		ts.put(slot+8, 1000*uint64(i)+10)
		ts.put(slot+16, 1000*uint64(i)+20)
	}
	ts.must(&ddswire.DelCx{Offset: slots[2]}, -1, spmierr.SiSuccess)

	type stat struct {
		path, rel string
		val       uint64
	}
	var want []stat // in OID order
	for _, x := range []struct {
		name string
		asn  uint32
	}{{"c", 1}, {"a", 2}, {"b", 3}} {
		want = append(want, stat{"DDS/Acme/P/" + x.name, fmt.Sprintf("99.7.1.%d", x.asn), 100 + uint64(x.asn)})
	}
	for _, i := range []uint64{1, 3, 4} {
		for _, x := range []struct {
			name string
			asn  uint32
		}{{"z", 10}, {"x", 20}, {"y", 30}} {
			want = append(want, stat{fmt.Sprintf("DDS/Acme/I%d/%s", i, x.name), fmt.Sprintf("99.7.%d.%d", 10+i, x.asn), 1000*i + uint64(x.asn)})
		}
	}
	for _, w := range want {
		wantNode(t, h, w.path, w.rel, w.val)
	}
	if lookup(h, "DDS/Acme/I2/") != nil {
		t.Fatal("a deleted instance is served")
	}

	snap := h.Refresh()
	base := asn1tree.OID{1, 3, 6, 1, 4, 1, 32473, 1}
	oid := func(rel string) asn1tree.OID {
		o := slices.Clone(base)
		for _, a := range strings.Split(rel+".0", ".") {
			var n uint32
			fmt.Sscan(a, &n)
			o = append(o, n)
		}
		return o
	}
	// Gets through one answer (one pin), in an order that jumps between
	// contexts both ways.
	order := rand.New(rand.NewPCG(1, 2)).Perm(len(want))
	order = append(order, len(want)-1, 0, len(want)-1)
	a := snap.Answer()
	for _, k := range order {
		v, ok := a.Get(oid(want[k].rel))
		if !ok || v.Num != want[k].val {
			t.Fatalf("get %s (%s): %v %v, want %d", want[k].path, want[k].rel, v, ok, want[k].val)
		}
	}
	a.Release()

	// A walk of the scalars under DDS/Acme: in OID order, the same values.
	a = snap.Answer()
	defer a.Release()
	var got []string
	start, end := oid("99.7"), oid("99.8")
	start = start[:len(start)-1]
	end = end[:len(end)-1]
	for o, include := start, true; ; include = false {
		next, v, ok := a.Search(o, include, end)
		if !ok {
			break
		}
		o = next
		if v.Kind == asn1tree.Counter64 || v.Kind == asn1tree.Gauge32 {
			got = append(got, fmt.Sprintf("%s=%d", asn1tree.OID(next[len(base):]), v.Num))
		}
	}
	var exp []string
	for _, w := range want {
		exp = append(exp, fmt.Sprintf("%s.0=%d", w.rel, w.val))
	}
	if !slices.Equal(got, exp) {
		t.Fatalf("walk:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(exp, "\n"))
	}
}

// A pin finds each field's context by its range, walking forwards or
// backwards or jumping; a field in no context, or in a context newer
// than the copy, has no value.
func TestAreaPinFindsEachFieldsContext(t *testing.T) {
	set := func(n int) *statSet {
		stats := make([]ddswire.Stat, n)
		for i := range stats {
			stats[i] = ddswire.Stat{Name: fmt.Sprint("s", i), ASN: uint32(n - i), Max: 1 << 40, DataType: ddswire.SiLong, Size: 8, Offset: uint32(8 * i), Type: ddswire.SiULong}
		}
		ss, err := newStatSet(stats)
		if err != nil {
			t.Fatal(err)
		}
		return ss
	}
	s1, s3 := set(1), set(3)
	// Fields: cx 1 (base 0) 0-2, cx 2 (base 64) 3, cx 3 (base 128) 4-6,
	// none 7-9 (a refused block), cx 4 (base 256) 10-12.
	l := &liveSup{cxs: []liveCx{
		{stats: s3, id: 1, first: 0, base: 0},
		{stats: s1, id: 2, first: 3, base: 64},
		{stats: s3, id: 3, first: 4, base: 128},
		{stats: s3, id: 9, first: 10, base: 256},
	}, n: 13, maxID: 9}
	words := make([]uint64, 64)
	for i := range words {
		words[i] = uint64(1000 + 8*i) // a word's value is 1000 + its offset
	}
	// Field j of a set of n is statistic n-1-j's (ASN order reverses
	// them), at offset 8*(n-1-j).
	want := map[uint32]uint64{
		0: 1016, 1: 1008, 2: 1000,
		3: 1064,
		4: 1144, 5: 1136, 6: 1128,
		10: 1272, 11: 1264, 12: 1256,
	}
	pin := &areaPin{buf: &areaCopy{words: words}, upTo: 3, l: l}
	check := func(seq []uint32) {
		t.Helper()
		for _, i := range seq {
			v := pin.Value(i)
			w, ok := want[i]
			if i >= 10 { // cx 4 is newer than the copy
				ok = false
			}
			if v.OK() != ok || ok && v.Uint64() != w {
				t.Fatalf("field %d: %v, want %d (%v)", i, v, w, ok)
			}
		}
	}
	var fwd, back []uint32
	for i := range uint32(15) {
		fwd = append(fwd, i)
		back = append(back, 14-i)
	}
	check(fwd)
	check(back)
	check([]uint32{5, 0, 12, 3, 3, 8, 1, 6, 4, 2, 14, 10})
	pin.upTo = ^uint64(0)
	for i := range uint32(15) {
		v := pin.Value(i)
		if w, ok := want[i]; v.OK() != ok || ok && v.Uint64() != w {
			t.Fatalf("field %d: %v, want %d (%v)", i, v, w, ok)
		}
	}
}
