package directory

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/spmi"
)

// A fake DDS registry: a supplier's contexts, told to the directory as
// they appear and vanish, as dds's registry does; set("", false) tells
// the registry as it starts.
type fakeDDS struct {
	mu   sync.Mutex
	sups map[string]bool
	src  *Source
}

func (f *fakeDDS) set(name string, on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if name == "" {
		f.src.Change([]string{"DDS/"}, nil)
		return
	}
	ctxs := []string{"DDS/" + name + "/", "DDS/" + name + "/Test/"}
	switch {
	case on && !f.sups[name]:
		f.sups[name] = true
		f.src.Change(ctxs, nil)
	case !on && f.sups[name]:
		delete(f.sups, name)
		f.src.Change(nil, ctxs)
	}
}

// 20 suppliers that register and leave with nobody reading the tree: 40
// generations, each told at once with its contexts, and the change table
// names every path, in order.
func TestSupplierChangesCountedWithoutReader(t *testing.T) {
	h := spmi.NewHierarchy(spmi.Config{Base: asn1tree.MustParse("1.3.6.1.4.1.32473.1")})
	h.Add(&disks{names: []string{"sda"}})
	var changes []Change
	d := New(h.Current, func(c Change) { changes = append(changes, c) })
	h.Add(d.Provider())
	f := &fakeDDS{sups: map[string]bool{}, src: d.Source("DDS")}
	f.set("", false) // the registry as it starts
	h.Refresh()
	h.Refresh() // the first that builds the directory: its first generation
	g0 := d.Generation()
	for i := range 20 {
		name := fmt.Sprintf("S%02d", i)
		f.set(name, true)
		f.set(name, false)
	}
	if g := d.Generation(); g != g0+40 || len(changes) != 40 {
		t.Fatalf("generation %d after 20 suppliers came and went, want %d; changes told: %d, want 40", g, g0+40, len(changes))
	}
	for i, c := range changes {
		name := fmt.Sprintf("DDS/S%02d/", i/2)
		want := []string{name, name + "Test/"}
		got := c.Added
		if i%2 == 1 {
			got = c.Removed
		}
		if c.Generation != g0+uint32(i)+1 || !slices.Equal(got, want) || len(c.Added)+len(c.Removed) != 2 {
			t.Errorf("change %d: %+v, want generation %d with %v only", i, c, g0+uint32(i)+1, want)
		}
	}
	// The change table, read from the next snapshot: 80 rows, in order.
	s := h.Refresh()
	n, err := s.Lookup(Name + "/change/")
	if err != nil {
		t.Fatal(err)
	}
	if len(n.Children) != 80 {
		t.Fatalf("change table has %d rows, want 80", len(n.Children))
	}
	for k, r := range n.Children {
		i := k / 2
		name := fmt.Sprintf("DDS/S%02d/", i/2)
		op := "+"
		if i%2 == 1 {
			op = "-"
		}
		path := name
		if k%2 == 1 {
			path += "Test/"
		}
		var paths []string
		r.EachChild(func(c *spmi.Node) bool { paths = append(paths, c.Path); return true })
		sample, err := s.Read([]string{paths[0], paths[2], paths[3]})
		if err != nil {
			t.Fatal(err)
		}
		got := []string{sample.Items[0].Value.String(), sample.Items[1].Value.String(), sample.Items[2].Value.String()}
		if want := []string{strconv.Itoa(int(g0) + i + 1), op, path}; !slices.Equal(got, want) {
			t.Errorf("change row %d: %q, want %q", k+1, got, want)
		}
	}
	sample, err := s.Read([]string{"Directory/generation", "Directory/changes"})
	if err != nil {
		t.Fatal(err)
	}
	if got := []string{sample.Items[0].Value.String(), sample.Items[1].Value.String()}; !slices.Equal(got, []string{strconv.Itoa(int(g0) + 40), "80"}) {
		t.Errorf("Directory/generation and changes: %q, want %d and 80", got, g0+40)
	}
}

// The generation goes on above the last one after a restart (the file's
// mark), written in the background once per half StoreStep changes, not
// per change.
func TestGenerationKeptAcrossRestarts(t *testing.T) {
	file := filepath.Join(t.TempDir(), StoreFile)
	start := func() (*Directory, *fakeDDS) {
		t.Helper()
		d := New(func() *spmi.Snapshot { return nil }, nil)
		if err := d.Keep(file, func(err error) { t.Error(err) }); err != nil {
			t.Fatal(err)
		}
		f := &fakeDDS{sups: map[string]bool{}, src: d.Source("DDS")}
		f.set("", false)
		return d, f
	}
	d, f := start()
	marks := map[string]bool{}
	for i := range 100 {
		f.set("S", i%2 == 0)
		d.Flush()
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		marks[string(b)] = true
		if m, _ := strconv.Atoi(strings.TrimSpace(string(b))); m <= int(d.Generation()) {
			t.Fatalf("the file's mark %d is not above generation %d", m, d.Generation())
		}
	}
	g1 := d.Generation()
	if g1 != 100 {
		t.Fatalf("generation %d after 100 changes, want 100", g1)
	}
	if len(marks) > 2*100/StoreStep+1 {
		t.Errorf("the file was written %d times for 100 changes, want at most %d", len(marks), 2*100/StoreStep+1)
	}
	d2, f2 := start()
	if g := d2.Generation(); g <= g1 {
		t.Fatalf("generation %d after a restart, want more than %d", g, g1)
	}
	f2.set("T", true)
	if g := d2.Generation(); g <= g1+1 {
		t.Errorf("generation %d after a change following the restart, want more than %d", g, g1+1)
	}
	d2.Flush()

	if err := os.WriteFile(file, []byte("many\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := New(nil, nil).Keep(file, nil); err == nil || !strings.Contains(err.Error(), "many") {
		t.Errorf("a generation file holding \"many\" was taken: %v", err)
	}
}

// hotsetLike serves Hotset/<name>/ with feed rows and exceptions, and
// NotifLog/entry/<n>/, as many as it is told: the records of each
// evaluation.
type hotsetLike struct {
	mu         sync.Mutex
	sets, rows int
}

var (
	hsCx    = spmi.CxDesc{Name: "Hotset", Descr: "Hotsets", ASN: 14, Inst: ddswire.SiCfgInst}
	hsTpl   = spmi.CxDesc{Descr: "Hotset"}
	feedCx  = spmi.CxDesc{Name: "feed", Descr: "Feed", ASN: 20, Inst: ddswire.SiContInst}
	excpCx  = spmi.CxDesc{Name: "excp", Descr: "Exceptions", ASN: 21, Inst: ddswire.SiContInst}
	rowTpl  = spmi.CxDesc{Descr: "Row"}
	rowStat = []spmiwire.StatDesc{{Name: "value", Descr: "A value", ASN: 1, Max: 10, Val: ddswire.SiQuantity}}
)

func (p *hotsetLike) Name() string { return "Hotset" }
func (p *hotsetLike) Collect(b *spmi.Builder) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	top, err := b.Context(nil, &hsCx)
	if err != nil {
		return err
	}
	for i := range p.sets {
		set, err := b.Instance(top, &hsTpl, fmt.Sprintf("h%d", i), "", uint32(i+1))
		if err != nil {
			return err
		}
		for _, cx := range []*spmi.CxDesc{&feedCx, &excpCx} {
			c, err := b.Context(set, cx)
			if err != nil {
				return err
			}
			for r := range p.rows {
				row, err := b.Instance(c, &rowTpl, strconv.Itoa(r+1), "", uint32(r+1))
				if err != nil {
					return err
				}
				if err := b.Stats(row, rowStat, []spmiwire.Value{spmiwire.Uint(1)}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// Feed rows and exceptions coming and going with the evaluations are no
// tree change; the first hotset is.
func TestFeedRowsAreNoTreeChange(t *testing.T) {
	h := spmi.NewHierarchy(spmi.Config{Base: asn1tree.MustParse("1.3.6.1.4.1.32473.1")})
	p := &hotsetLike{}
	h.Add(p)
	var changes []Change
	d := New(h.Current, func(c Change) { changes = append(changes, c) })
	h.Add(d.Provider())
	h.Refresh()
	h.Refresh()
	set := func(sets, rows int) {
		p.mu.Lock()
		p.sets, p.rows = sets, rows
		p.mu.Unlock()
		h.Refresh()
		h.Refresh()
	}
	set(1, 0)
	if len(changes) != 1 || !slices.Contains(changes[0].Added, "Hotset/*/") {
		t.Fatalf("changes after the first hotset: %+v, want one adding Hotset/*/", changes)
	}
	g := d.Generation()
	for i := range 10 {
		set(1, 1+i%2*3) // rows come...
		set(1, 0)       // ...and go
	}
	if d.Generation() != g || len(changes) != 1 {
		t.Errorf("feed rows and exceptions came and went: generation %d (was %d), changes %+v; want none", d.Generation(), g, changes[1:])
	}
}

// Changes told while the tree is read and looked at: each is counted
// once (run with -race).
func TestChangesWhileReading(t *testing.T) {
	h := spmi.NewHierarchy(spmi.Config{Base: asn1tree.MustParse("1.3.6.1.4.1.32473.1")})
	h.Add(&disks{names: []string{"sda"}})
	d := New(h.Current, nil)
	h.Add(d.Provider())
	f := &fakeDDS{sups: map[string]bool{}, src: d.Source("DDS")}
	f.set("", false)
	h.Refresh()
	h.Refresh()
	g0 := d.Generation()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 400 {
			f.set("S", i%2 == 0)
		}
	}()
	for reading := true; reading; {
		select {
		case <-done:
			reading = false
		default:
		}
		if _, err := h.Refresh().Read([]string{"Directory/generation"}); err != nil {
			t.Fatal(err)
		}
	}
	s := h.Refresh()
	if g := d.Generation(); g != g0+400 {
		t.Errorf("generation %d, want %d", g, g0+400)
	}
	n, err := s.Lookup(Name + "/change/")
	if err != nil {
		t.Fatal(err)
	}
	if len(n.Children) != 800 {
		t.Errorf("change table has %d rows, want 800", len(n.Children))
	}
}

// A source that knows only that something changed (ARM) asks the
// directory to Look: the tree is read and compared then, not at the
// next reader's.
func TestLookComparesAtOnce(t *testing.T) {
	h := spmi.NewHierarchy(spmi.Config{Base: asn1tree.MustParse("1.3.6.1.4.1.32473.1")})
	dk := &disks{names: []string{"sda"}}
	h.Add(dk)
	h.Add(extra{dk})
	changes := make(chan Change, 10)
	d := New(h.Current, func(c Change) { changes <- c })
	h.Add(d.Provider())
	h.Refresh()
	h.Refresh()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go d.Watch(ctx, func() { h.Refresh() })
	dk.mu.Lock()
	dk.extra = true
	dk.mu.Unlock()
	d.Look()
	select {
	case c := <-changes:
		if !slices.Equal(c.Added, []string{"Extra/"}) {
			t.Errorf("change %+v, want Extra/ added", c)
		}
	case <-time.After(time.Minute):
		t.Fatal("no change told within a minute of Look")
	}
}

// A provider added to the hierarchy at run time is a tree change seen at
// once: the hierarchy tells the directory to Look.
func TestProviderAddedIsSeen(t *testing.T) {
	h := spmi.NewHierarchy(spmi.Config{Base: asn1tree.MustParse("1.3.6.1.4.1.32473.1")})
	dk := &disks{names: []string{"sda"}}
	h.Add(dk)
	changes := make(chan Change, 10)
	d := New(h.Current, func(c Change) { changes <- c })
	h.Add(d.Provider())
	h.SetOnProviders(d.Look)
	h.Refresh()
	h.Refresh()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go d.Watch(ctx, func() { h.Refresh() })
	dk.mu.Lock()
	dk.extra = true
	dk.mu.Unlock()
	h.Add(extra{dk})
	select {
	case c := <-changes:
		if !slices.Equal(c.Added, []string{"Extra/"}) {
			t.Errorf("change %+v, want Extra/ added", c)
		}
	case <-time.After(time.Minute):
		t.Fatal("no change told within a minute of the provider's addition")
	}
}
