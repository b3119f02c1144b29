package spmi

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
)

// fieldSource is a live source whose field i is base+i.
type fieldSource struct{ base *uint64 }

func (s fieldSource) Pin() LivePin { return fieldPin(*s.base) }

type fieldPin uint64

func (p fieldPin) Value(i uint32) spmiwire.Value { return spmiwire.Uint(uint64(p) + uint64(i)) }

var (
	graftAgent = CxDesc{Name: "Agent", Descr: "Agent", ASN: 12}
	graftProv  = CxDesc{Name: "prov", Descr: "providers", ASN: 5, Inst: ddswire.SiContInst}
	graftLate  = CxDesc{Name: "late", Descr: "after the fragment", ASN: 60, Inst: ddswire.SiContInst}
	graftExpr  = CxDesc{Name: "expr", Descr: "expressions", ASN: 38, Inst: ddswire.SiContInst}
	graftRow   = CxDesc{Descr: "row"}
	graftBlock = mustTestBlock([]spmiwire.StatDesc{
		{Name: "kind", Descr: "kind", ASN: 1, Val: ddswire.SiQuantity, Max: 10},
		{Name: "cost", Descr: "cost", ASN: 3, Val: ddswire.SiCounter, Max: 10},
	})
	graftTotals = mustTestBlock([]spmiwire.StatDesc{{Name: "evals", Descr: "evals", ASN: 1, Val: ddswire.SiCounter, Max: 1}})
)

func mustTestBlock(ds []spmiwire.StatDesc) *Block {
	b, err := NewBlock(ds)
	if err != nil {
		panic(err)
	}
	return b
}

// graftTree builds Agent with tables before and after Agent/expr (ASN
// 38), which has rows of its own; with frag, Agent/expr is a fragment
// (made once into *frag, then grafted), else built in place.
func graftTree(t testing.TB, b *Builder, rows int, src LiveSource, frag **Fragment) {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	ag, err := b.Context(nil, &graftAgent)
	must(err)
	must(b.Stat(ag, &spmiwire.StatDesc{Name: "uptime", Descr: "up", ASN: 1, Val: ddswire.SiCounter, Max: 1}, spmiwire.Uint(7)))
	for _, d := range []*CxDesc{&graftProv, &graftLate} {
		cx, err := b.Context(ag, d)
		must(err)
		for i := range 3 {
			in, err := b.Instance(cx, &graftRow, fmt.Sprintf("%s%d", d.Name, i), "", uint32(i+1))
			must(err)
			must(b.Stat(in, &spmiwire.StatDesc{Name: "n", Descr: "n", ASN: 1, Val: ddswire.SiQuantity, Max: 9}, spmiwire.Int(int64(i))))
		}
	}
	build := func(b *Builder, ag *Node) error {
		cx, err := b.Context(ag, &graftExpr)
		if err != nil {
			return err
		}
		if err := b.LiveBlock(cx, graftTotals, src, 0); err != nil {
			return err
		}
		for i := range rows {
			in, err := b.Instance(cx, &graftRow, fmt.Sprintf("x%d", i), fmt.Sprintf("expression %d", i), 0)
			if err != nil {
				return err
			}
			if err := b.LiveBlock(in, graftBlock, src, uint32(1+2*i)); err != nil {
				return err
			}
		}
		return nil
	}
	if frag == nil {
		must(build(b, ag))
		return
	}
	if *frag == nil || !(*frag).Fits(b, ag) {
		f, err := b.Fragment(ag, build)
		must(err)
		*frag = f
	}
	must(b.Graft(ag, *frag))
}

// walkAll is every OID and value a walk of s returns, in order.
func walkAll(s *Snapshot) []string {
	var out []string
	r := s.Answer()
	o := s.Base
	for range 100000 {
		next, v, ok := r.Search(o, false, nil)
		if !ok {
			break
		}
		out = append(out, next.String()+"="+fmt.Sprint(v))
		o = next
	}
	return out
}

// A grafted fragment is served as the same subtree built in place: the
// walk (scalars and both tables around it), lookups by path, the layout,
// the statistics' count, in each view; and its live values move.
func TestGraftServesAsBuilt(t *testing.T) {
	for _, views := range []Views{ViewBoth, ViewScalars, ViewTables} {
		t.Run(fmt.Sprint(views), func(t *testing.T) {
			v := uint64(100)
			src := fieldSource{&v}
			num := NewNumbering("")
			mk := func(frag **Fragment) *Snapshot {
				b := NewBuilder(testBase, num, time.Unix(1000, 0))
				b.SetViews(views)
				graftTree(t, b, 40, src, frag)
				return b.Finish()
			}
			var f *Fragment
			inPlace, grafted := mk(nil), mk(&f)
			again := mk(&f) // the same fragment in a second builder
			want := walkAll(inPlace)
			if len(want) < 40 {
				t.Fatalf("walk of %d entries", len(want))
			}
			for _, s := range []*Snapshot{grafted, again} {
				if got := walkAll(s); strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Fatalf("grafted walk differs:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
				if s.NumStats != inPlace.NumStats || s.ViewLen() != inPlace.ViewLen() {
					t.Fatalf("%d statistics, %d entries; built in place %d, %d", s.NumStats, s.ViewLen(), inPlace.NumStats, inPlace.ViewLen())
				}
				if s.Layout() != inPlace.Layout() || s.PartLayout("Agent") != inPlace.PartLayout("Agent") {
					t.Fatal("the layout differs from the tree built in place")
				}
				for _, p := range []string{"Agent/expr", "Agent/expr/x7", "Agent/expr/x7/cost", "Agent/expr/evals", "Agent/late/late2/n", "Agent/uptime"} {
					got, err := s.Read([]string{p})
					exp, _ := inPlace.Read([]string{p})
					if err != nil || fmt.Sprint(got.Items) != fmt.Sprint(exp.Items) {
						t.Fatalf("%s: %v, built in place %v", p, got.Items, exp.Items)
					}
					if n, err := s.Lookup(p); err != nil || n.Path != strings.TrimSuffix(p, "/")+map[bool]string{true: "", false: "/"}[n.IsStat()] {
						t.Fatalf("lookup %s: %v %v", p, n, err)
					}
				}
				// Every OID of the walk is found by a Get.
				r := s.Answer()
				for _, e := range want {
					o, _, _ := strings.Cut(e, "=")
					oid, _ := asn1tree.Parse(o)
					if _, ok := r.Get(oid); !ok {
						t.Fatalf("Get %s: not found", o)
					}
				}
			}
			v = 500 // live: the next answer reads the new values
			if got := fmt.Sprint(grafted.Read([]string{"Agent/expr/x1/cost"})); !strings.Contains(got, "504") {
				t.Fatalf("live value after a change: %s", got)
			}
		})
	}
}

// Grafting shares the fragment's nodes: builders grafting it while
// answers read an earlier snapshot change nothing of them (go test -race).
func TestGraftSharedWhileRead(t *testing.T) {
	v := uint64(1)
	src := fieldSource{&v}
	num := NewNumbering("")
	var f *Fragment
	b := NewBuilder(testBase, num, time.Now())
	graftTree(t, b, 200, src, &f)
	first := b.Finish()
	want := len(walkAll(first))
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for range 20 {
				if n := len(walkAll(first)); n != want {
					t.Errorf("walk of %d entries, want %d", n, want)
					return
				}
			}
		}()
		go func() {
			defer wg.Done()
			for range 20 {
				b := NewBuilder(testBase, num, time.Now())
				ff := f
				graftTree(t, b, 200, src, &ff)
				if ff != f {
					t.Error("a fitting fragment was built again")
				}
				_ = b.Finish()
			}
		}()
	}
	wg.Wait()
}

// The names of a fragment's contexts are live for the numbering: a sweep
// releases none of them.
func TestGraftNamesStayNumbered(t *testing.T) {
	v := uint64(1)
	var f *Fragment
	h := NewHierarchy(Config{Base: testBase})
	h.Add(providerFunc(func(b *Builder) error { graftTree(t, b, 30, fieldSource{&v}, &f); return nil }))
	s := h.Refresh()
	live := liveNames(s.parts)
	if len(live["Agent/expr"]) != 30 || !live["Agent"]["expr"] {
		t.Fatalf("live names under Agent/expr: %d (Agent: %v)", len(live["Agent/expr"]), live["Agent"])
	}
}

// Bad fragments and grafts are refused with what was wrong.
func TestFragmentRefused(t *testing.T) {
	b := NewBuilder(testBase, nil, time.Now())
	ag, err := b.Context(nil, &graftAgent)
	if err != nil {
		t.Fatal(err)
	}
	other, err := b.Context(nil, &CxDesc{Name: "Other", Descr: "o", ASN: 13})
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Fragment(ag, func(fb *Builder, at *Node) error {
		if _, err := fb.Context(at, &graftExpr); err != nil {
			return err
		}
		_, err := fb.Context(at, &graftLate)
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "must add one context") {
		t.Fatalf("two contexts: %v", err)
	}
	f, err := b.Fragment(ag, func(fb *Builder, at *Node) error { _, err := fb.Context(at, &graftExpr); return err })
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Graft(other, f); err == nil || !strings.Contains(err.Error(), `built under "Agent/"`) {
		t.Fatalf("graft under another parent: %v", err)
	}
	if err := b.Graft(ag, f); err != nil {
		t.Fatal(err)
	}
	if err := b.Graft(ag, f); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("graft twice: %v", err)
	}
	b2 := NewBuilder(testBase, nil, time.Now())
	b2.SetViews(ViewScalars)
	if ag2, _ := b2.Context(nil, &graftAgent); f.Fits(b2, ag2) {
		t.Fatal("a fragment of both views fits a builder of scalars")
	}
}
