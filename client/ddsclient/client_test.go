package ddsclient

import (
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmierr"
)

// guide declares the guide's first sample plus a volatile template.
type guide struct {
	v                *Vendor
	gadgets, widgets *Counter
	level            *Gauge
	ratio            *Float
	disk             *Template
	reads            Field[Counter]
	busy             Field[Float]
}

func newGuide() *guide {
	g := &guide{v: NewVendor("IBM", "IBM-defined Dynamic Data-Suppliers", 2)}
	test := g.v.Context("Test", "Bogus Context Number 1", 220)
	g.gadgets = test.Counter("gadgets", "Fake counter value", 1, Range(0, 100))
	g.widgets = test.Counter("widgets", "Another fake counter value", 2, Range(0, 100))
	more := g.v.Context("Moretest", "Bogus Context Number 2", 221)
	sub := more.Context("SubTest", "Bogus Context Number 3", 222)
	g.level = sub.Gauge("level", "Fake quantity value", 1, Range(-5, 100))
	g.ratio = sub.Float("ratio", "Fake float value", 2)
	g.disk = g.v.Template("Disk", "Disk template")
	g.reads = g.disk.Counter("reads", "Reads", 1)
	g.busy = g.disk.Float("busy", "Busy fraction", 2)
	return g
}

func start(t testing.TB, f *fake, g *guide, opt *Options) (*Supplier, string) {
	t.Helper()
	if opt == nil {
		opt = &Options{}
	}
	opt.Socket = f.sock
	path := filepath.Join(t.TempDir(), "sup.dds")
	s, err := Start(g.v, path, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Exit() })
	return s, path
}

func TestInitTablesAndFile(t *testing.T) {
	f := newFake(t)
	g := newGuide()
	s, path := start(t, f, g, nil)
	in := f.inits[0]
	if in.File != path || len(in.Contexts) != 4 || len(in.Templates) != 1 {
		t.Fatalf("Init %+v", in)
	}
	if in.Contexts[0].Path != "DDS/IBM" || in.Contexts[3].Path != "DDS/IBM/Moretest/SubTest" {
		t.Fatalf("paths %q %q", in.Contexts[0].Path, in.Contexts[3].Path)
	}
	if in.PermLen != 32 || in.Templates[0].DataSize != 16 || in.AreaLen != 32+64*16 {
		t.Fatalf("geometry perm %d slot %d area %d", in.PermLen, in.Templates[0].DataSize, in.AreaLen)
	}
	st := in.Contexts[3].Stats[0]
	if st.Offset != 16 || st.Size != 8 || st.Type != ddswire.SiLong || st.ValType != ddswire.SiQuantity || st.Min != -5 {
		t.Fatalf("level stat %+v", st)
	}
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode().Perm() != 0o600 || fi.Size() != int64(ddswire.HeaderSize+in.AreaLen) {
		t.Fatalf("file %v %v", fi, err)
	}
	h := ddswire.DecodeHeader(f.mem)
	if h.Gen != in.Generation || h.FileName() != path || s.Registration() != 1 {
		t.Fatalf("header %+v", h)
	}
}

func TestSetReadByDaemon(t *testing.T) {
	f := newFake(t)
	g := newGuide()
	start(t, f, g, nil)
	in := f.inits[0]
	g.gadgets.Set(42)
	g.widgets.Add(7)
	g.widgets.Inc()
	g.level.Set(-3)
	g.ratio.Set(0.25)
	g.ratio.Add(0.5)
	for _, c := range []struct {
		cx, st int
		want   float64
	}{{1, 0, 42}, {1, 1, 8}, {3, 0, -3}, {3, 1, 0.75}} {
		if v := f.read(&in.Contexts[c.cx].Stats[c.st], 0); v.Float64() != c.want {
			t.Errorf("context %d stat %d: %v, want %v", c.cx, c.st, v, c.want)
		}
	}
	if g.widgets.Load() != 8 || g.level.Load() != -3 {
		t.Fatal("Load")
	}
}

func TestStampAndGoAway(t *testing.T) {
	f := newFake(t)
	g := newGuide()
	var clk atomic.Int64 // the Stamp clock, in ns
	clk.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	s, _ := start(t, f, g, &Options{AutoStamp: true, now: func() time.Time { return time.Unix(0, clk.Load()) }})
	// SiShT is the clock's struct timeval: seconds, microseconds.
	stamped := func() ddswire.Stamp {
		ns := clk.Load()
		return ddswire.Stamp{uint64(ns / 1e9), uint64(ns % 1e9 / 1e3)}
	}
	clk.Add(int64(time.Millisecond))
	g.gadgets.Set(1)
	if got, _ := ddswire.LoadStamp(f.mem); got != stamped() {
		t.Fatalf("SiShT %v after a Set with AutoStamp, want %v", got, stamped())
	}
	clk.Add(int64(time.Millisecond))
	s.Update(func() { g.widgets.Set(2) })
	if got, _ := ddswire.LoadStamp(f.mem); got != stamped() {
		t.Fatalf("SiShT %v after Update, want %v", got, stamped())
	}
	if s.GoAway() || s.Interval() != 0 || s.Subscribers() != 0 {
		t.Fatal("fresh header fields")
	}
	ddswire.StoreInterval(f.mem, 500)
	ddswire.StoreSubscrib(f.mem, 3)
	ddswire.SetGoAway(f.mem)
	if !s.GoAway() || s.Interval() != 500*time.Millisecond || s.Subscribers() != 3 {
		t.Fatal("daemon's header fields not seen")
	}
}

func TestAddDelCx(t *testing.T) {
	f := newFake(t)
	g := newGuide()
	s, _ := start(t, f, g, nil)
	tmpl := &f.inits[0].Templates[0]
	a, err := s.AddCx(g.disk, "DDS/IBM/sda", "Disk sda", 10)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.AddCx(g.disk, "DDS/IBM/sdb", "Disk sdb", 11)
	if err != nil {
		t.Fatal(err)
	}
	if a.Offset() != 32 || b.Offset() != 48 {
		t.Fatalf("slots %d %d", a.Offset(), b.Offset())
	}
	a.Counter(g.reads).Set(5)
	bReads := b.Counter(g.reads)
	bReads.Set(9)
	b.Float(g.busy).Set(0.5)
	if v := f.read(&tmpl.Stats[0], a.Offset()); v.Float64() != 5 {
		t.Fatalf("a reads %v", v)
	}
	if v := f.read(&tmpl.Stats[1], b.Offset()); v.Float64() != 0.5 {
		t.Fatalf("b busy %v", v)
	}
	if err := s.DelCx(b); err != nil {
		t.Fatal(err)
	}
	bReads.Set(77) // parked: must not reach the freed slot
	if v := f.read(&tmpl.Stats[0], 48); v.Float64() != 9 {
		t.Fatalf("freed slot changed: %v", v)
	}
	if err := s.DelCx(b); spmierr.CodeOf(err) != spmierr.SiBadArgument {
		t.Fatalf("second DelCx: %v", err)
	}
	add := f.got[0].(*ddswire.AddCx)
	if add.Path != "DDS/IBM/sda" || add.ASN != 10 || add.Ix != 0 {
		t.Fatalf("AddCx sent %+v", add)
	}
}

func TestDaemonErrors(t *testing.T) {
	f := newFake(t)
	g := newGuide()
	s, _ := start(t, f, g, nil)
	f.mu.Lock()
	f.addErr = spmierr.Errorf(spmierr.SiDuplicate, "DDS/IBM/sda exists")
	f.mu.Unlock()
	_, err := s.AddCx(g.disk, "DDS/IBM/sda", "Disk sda", 10)
	var se *spmierr.Error
	if !errors.As(err, &se) || se.Code != spmierr.SiDuplicate || se.Msg != "DDS/IBM/sda exists" {
		t.Fatalf("AddCx error %v", err)
	}
	if !s.Connected() {
		t.Fatal("a refused AddCx dropped the connection")
	}
	f2 := newFake(t)
	f2.initErr = spmierr.Errorf(spmierr.SiInvalidCx, "no parent")
	_, err = Start(newGuide().v, filepath.Join(t.TempDir(), "x.dds"), &Options{Socket: f2.sock})
	if spmierr.CodeOf(err) != spmierr.SiInvalidCx {
		t.Fatalf("Init error %v", err)
	}
	_, err = Start(newGuide().v, filepath.Join(t.TempDir(), "y.dds"), &Options{Socket: filepath.Join(t.TempDir(), "none")})
	if !errors.Is(err, ErrDisconnected) {
		t.Fatalf("no daemon: %v", err)
	}
}

func TestExitRemovesFile(t *testing.T) {
	f := newFake(t)
	g := newGuide()
	s, path := start(t, f, g, nil)
	if err := s.Exit(); err != nil {
		t.Fatal(err)
	}
	<-f.exited
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Fatalf("file still there: %v", err)
	}
	g.gadgets.Set(1) // parked, no fault
	if _, err := s.AddCx(g.disk, "DDS/IBM/x", "x", 1); spmierr.CodeOf(err) != spmierr.SiNotInit {
		t.Fatalf("AddCx after Exit: %v", err)
	}
}

func TestStaleFileReplaced(t *testing.T) {
	f := newFake(t)
	path := filepath.Join(t.TempDir(), "sup.dds")
	if err := os.WriteFile(path, []byte("stale"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Start(newGuide().v, path, &Options{Socket: f.sock})
	if err != nil {
		t.Fatal(err)
	}
	s.Exit()
}

func TestSetDoesNotAllocate(t *testing.T) {
	f := newFake(t)
	g := newGuide()
	start(t, f, g, nil)
	if n := testing.AllocsPerRun(1000, func() { g.gadgets.Set(1); g.level.Add(1); g.ratio.Set(1) }); n != 0 {
		t.Fatalf("%v allocations per Set", n)
	}
}

func TestSocketPath(t *testing.T) {
	t.Setenv("SUBAGENT_DDS_SOCKET", "")
	t.Setenv("SUBAGENT_RUN_DIR", "/x/run")
	if p := SocketPath(); p != "/x/run/dds.sock" {
		t.Fatal(p)
	}
	t.Setenv("SUBAGENT_DDS_SOCKET", "/y/s.sock")
	if p := SocketPath(); p != "/y/s.sock" {
		t.Fatal(p)
	}
}

func TestBadDeclarationRefusedLocally(t *testing.T) {
	v := NewVendor("IBM", "vendor", 2)
	c := v.Context("Test", "test", 220)
	c.Counter("x", "one", 1)
	c.Counter("x", "two", 2)
	path := filepath.Join(t.TempDir(), "sup.dds")
	if _, err := Start(v, path, &Options{Socket: "/nonexistent"}); spmierr.CodeOf(err) != spmierr.SiDuplicate {
		t.Fatalf("duplicate statistic: %v", err)
	}
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Fatal("file created for a refused declaration")
	}
}
