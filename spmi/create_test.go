package spmi

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// onReference creates Ref/<name> when a path names it; "bad" is refused.
type onReference struct {
	mu    sync.Mutex
	names []string
	asks  int
}

var (
	refCx   = CxDesc{Name: "Ref", Descr: "Created on reference", ASN: 50, Inst: SiCfgInst}
	refTpl  = CxDesc{Descr: "A referenced thing"}
	refStat = StatDesc{Name: "hits", Descr: "Hits", ASN: 1, Max: 10, Val: SiCounter}
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
		if err := b.Stat(inst, &refStat, Uint(uint64(7*(i+1)))); err != nil {
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

func TestLookupCreatesOnReference(t *testing.T) {
	o := &onReference{}
	h := NewHierarchy(Config{})
	h.Add(o)
	smp, err := h.Read(t.Context(), []string{"Ref/a/hits", "Ref/b/hits", "Ref/a/nothing"})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []uint64{7, 14} {
		it := smp.Items[i]
		if it.Err != nil || it.Value.Uint64() != want {
			t.Errorf("%s = %v (err %v), want %d", it.Path, it.Value, it.Err, want)
		}
	}
	// a exists now; its unknown statistic is not created again.
	if it := smp.Items[2]; it.Err == nil || it.Err.Code != SiNotFound {
		t.Errorf("Ref/a/nothing: %+v, want SiNotFound", it.Err)
	}
	n, err := h.Fresh().Lookup("Ref/a/")
	if err != nil || n.Path != "Ref/a/" {
		t.Fatalf("Lookup Ref/a/ after creation: %v %v", n, err)
	}
}

func TestLookupCreatorRefusalAndForeignPaths(t *testing.T) {
	o := &onReference{}
	h := NewHierarchy(Config{})
	h.Add(o)
	s := h.Refresh()
	_, err := s.Lookup("Ref/bad/hits")
	var se *Error
	if !errors.As(err, &se) || se.Code != SiNotFound || !strings.Contains(se.Msg, "bad is refused") {
		t.Errorf("refused creation: %v, want SiNotFound naming the refusal", err)
	}
	_, err = s.Lookup("Other/x")
	if CodeOf(err) != SiNotFound || !strings.Contains(err.Error(), `"Other/x"`) {
		t.Errorf("a path no creator owns: %v", err)
	}
	if len(o.names) != 0 {
		t.Errorf("created %v, want nothing", o.names)
	}
	// Paths found are never offered to a creator.
	asks := o.asks
	if _, err := h.Fresh().Lookup("Ref/"); err != nil || o.asks != asks {
		t.Errorf("Lookup Ref/: %v, creator asked %d times", err, o.asks-asks)
	}
}

func TestLookupWithoutCreatorsIsUnchanged(t *testing.T) {
	h := NewHierarchy(Config{})
	s := h.Refresh()
	if s.create != nil {
		t.Fatal("a hierarchy without creators sets the hook")
	}
	if _, err := s.Lookup("Ref/a"); CodeOf(err) != SiNotFound {
		t.Errorf("got %v, want SiNotFound", err)
	}
}

// readsInCollect looks a path up in the previous snapshot while the
// hierarchy refreshes, as a provider that reads paths would.
type readsInCollect struct {
	h    *Hierarchy
	path string
	err  error
}

func (r *readsInCollect) Name() string { return "Reader" }
func (r *readsInCollect) Collect(*Builder) error {
	if prev := r.h.Current(); prev != nil && r.path != "" {
		_, r.err = prev.Lookup(r.path)
		r.path = ""
	}
	return nil
}

// A creation asked for from inside a refresh cannot wait for the next
// refresh (it holds the refresh lock): it gives up after createWait
// instead of deadlocking, and the context appears at the next refresh.
func TestCreationInsideARefreshDoesNotDeadlock(t *testing.T) {
	o := &onReference{}
	h := NewHierarchy(Config{})
	r := &readsInCollect{h: h}
	h.Add(o)
	h.Add(r)
	h.Refresh()
	r.path = "Ref/z/hits"
	done := make(chan struct{})
	go func() { h.Refresh(); close(done) }()
	select {
	case <-done:
	case <-time.After(createWait + 5*time.Second):
		t.Fatal("refresh deadlocked on a creation inside it")
	}
	if CodeOf(r.err) != SiNotFound {
		t.Errorf("lookup inside the refresh: %v, want SiNotFound (ask again)", r.err)
	}
	if _, err := h.Refresh().Lookup("Ref/z/hits"); err != nil {
		t.Errorf("created context missing after the next refresh: %v", err)
	}
}
