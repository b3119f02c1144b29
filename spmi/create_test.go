package spmi

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/client/spmiwire"
)

// onReference creates Ref/<name> when a path names it; "bad" is refused.
type onReference struct {
	mu    sync.Mutex
	names []string
	asks  int
}

var (
	refCx   = CxDesc{Name: "Ref", Descr: "Created on reference", ASN: 50, Inst: ddswire.SiCfgInst}
	refTpl  = CxDesc{Descr: "A referenced thing"}
	refStat = spmiwire.StatDesc{Name: "hits", Descr: "Hits", ASN: 1, Max: 10, Val: ddswire.SiCounter}
)

func (o *onReference) Name() string { return "Ref" }

func (o *onReference) Collect(b *Builder) error {
	cx, err := b.Context(nil, &refCx)
	if err != nil {
		return err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for i, n := range o.names {
		inst, err := b.Instance(cx, &refTpl, n, "", uint32(i+1))
		if err != nil {
			return err
		}
		if err := b.Stat(inst, &refStat, spmiwire.Uint(uint64(7*(i+1)))); err != nil {
			return err
		}
	}
	return nil
}

func (o *onReference) Create(path string) (bool, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.asks++
	name, ok := strings.CutPrefix(path, "Ref/")
	if !ok {
		return false, nil
	}
	name, _, _ = strings.Cut(name, "/")
	if name == "bad" {
		return false, errors.New("bad is refused")
	}
	for _, n := range o.names {
		if n == name {
			return false, nil
		}
	}
	o.names = append(o.names, name)
	return true, nil
}

// A read never creates: only Create does, and the read after it sees
// the context.
func TestReadsNeverCreateCreateDoes(t *testing.T) {
	o := &onReference{}
	h := NewHierarchy(Config{})
	h.Add(o)
	smp, err := h.Read(t.Context(), []string{"Ref/a/hits"})
	if err != nil {
		t.Fatal(err)
	}
	if it := smp.Items[0]; it.Err == nil || it.Err.Code != spmierr.SiNotFound {
		t.Errorf("read of a missing context: %+v, want SiNotFound", it)
	}
	if _, err := h.Fresh().Lookup("Ref/b/"); spmierr.CodeOf(err) != spmierr.SiNotFound {
		t.Errorf("Lookup of a missing context: %v", err)
	}
	if o.asks != 0 || len(o.names) != 0 {
		t.Fatalf("reads asked the creator %d times and created %v", o.asks, o.names)
	}
	n, err := h.Create("Ref/a/hits")
	if err != nil || n.Path != "Ref/a/hits" {
		t.Fatalf("Create: %v %v", n, err)
	}
	smp, err = h.Read(t.Context(), []string{"Ref/a/hits", "Ref/a/nothing"})
	if err != nil {
		t.Fatal(err)
	}
	if it := smp.Items[0]; it.Err != nil || it.Value.Uint64() != 7 {
		t.Errorf("after Create: %+v", it)
	}
	if it := smp.Items[1]; it.Err == nil || it.Err.Code != spmierr.SiNotFound {
		t.Errorf("Ref/a/nothing: %+v, want SiNotFound", it.Err)
	}
	// Creating what exists returns it without asking again.
	asks := o.asks
	if _, err := h.Create("Ref/a/"); err != nil || o.asks != asks {
		t.Errorf("Create of an existing context: %v, creator asked %d times", err, o.asks-asks)
	}
}

func TestCreateRefusalAndForeignPaths(t *testing.T) {
	o := &onReference{}
	h := NewHierarchy(Config{})
	h.Add(o)
	_, err := h.Create("Ref/bad/hits")
	var se *spmierr.Error
	if !errors.As(err, &se) || se.Code != spmierr.SiBadArgument || !strings.Contains(se.Msg, "bad is refused") {
		t.Errorf("refused creation: %v, want SiBadArgument naming the refusal", err)
	}
	_, err = h.Create("Other/x")
	if spmierr.CodeOf(err) != spmierr.SiNotFound || !strings.Contains(err.Error(), `"Other/x"`) {
		t.Errorf("a path no creator owns: %v", err)
	}
	if len(o.names) != 0 {
		t.Errorf("created %v, want nothing", o.names)
	}
}

// Config.Spell gives every path one spelling before it is looked up, read,
// created or deleted, so that two spellings of one instance are one.
func TestSpellMakesTwoSpellingsOne(t *testing.T) {
	o := &onReference{}
	h := NewHierarchy(Config{Base: testBase, Spell: func(p string) string { return strings.Replace(p, "/[x]", "/x", 1) }})
	h.Add(o)
	if _, err := h.Create("Ref/[x]"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Create("/Ref/x/"); err != nil {
		t.Fatal(err)
	}
	if len(o.names) != 1 || o.names[0] != "x" {
		t.Fatalf("created %q, want the one instance x", o.names)
	}
	s := h.Fresh()
	if n, err := s.Lookup("Ref/[x]/hits"); err != nil || n.Path != "Ref/x/hits" {
		t.Fatalf("Lookup of the other spelling: %v %v", n, err)
	}
	smp, _ := s.Read([]string{"Ref/[x]/hits"})
	if it := smp.Items[0]; it.Err != nil || it.Path != "Ref/x/hits" || it.NotYet {
		t.Fatalf("Read of the other spelling: %+v", it)
	}
}
