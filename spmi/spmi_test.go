package spmi

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/consumer"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/client/spmiwire"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/testutil"
)

var testBase = asn1tree.MustParse("1.3.6.1.4.1.32473.1")

var (
	cpuCx   = CxDesc{Name: "CPU", Descr: "Processor statistics", ASN: 1, Inst: ddswire.SiCfgInst}
	cpuInst = CxDesc{Descr: "Processor", Inst: ddswire.SiNoInst}
	idle    = spmiwire.StatDesc{Name: "idle", Descr: "Idle time", ASN: 4, Max: 100, Val: ddswire.SiCounter, Data: spmiwire.SiLong}
	diskCx  = CxDesc{Name: "Disk", Descr: "Disks", ASN: 4, Inst: ddswire.SiCfgInst}
	busy    = spmiwire.StatDesc{Name: "busy", Descr: "Busy", ASN: 1, Max: 100, Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 2}
)

func TestGuideExampleRelativeID(t *testing.T) {
	b := NewBuilder(testBase, nil, time.Now())
	cpu, err := b.Context(nil, &cpuCx)
	if err != nil {
		t.Fatal(err)
	}
	c0, err := b.Instance(cpu, &cpuInst, "cpu0", "", 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Stat(c0, &idle, spmiwire.Uint(42)); err != nil {
		t.Fatal(err)
	}
	s := b.Finish()
	n, err := s.Lookup("CPU/cpu0/idle")
	if err != nil {
		t.Fatal(err)
	}
	if n.Rel.String() != "1.1.4" || n.FullOID(testBase).String() != "1.3.6.1.4.1.32473.1.1.1.4.0" {
		t.Fatalf("CPU/cpu0/idle is %s (%s)", n.Rel, n.FullOID(testBase))
	}
	if cx, _ := s.Lookup("CPU/cpu0/"); cx.Path != "CPU/cpu0/" || cx.IsStat() {
		t.Fatalf("context path %q", cx.Path)
	}
	v, ok := s.View().Get(n.FullOID(testBase))
	if !ok || v.Kind != asn1tree.Counter64 || v.Num != 42 {
		t.Fatalf("view has %v %v", v, ok)
	}
}

func TestClashesAreRefusedWithGuideErrors(t *testing.T) {
	b := NewBuilder(testBase, nil, time.Now())
	cpu, _ := b.Context(nil, &cpuCx)
	_, dup := b.Context(nil, &cpuCx)
	if spmierr.CodeOf(dup) != spmierr.SiDuplicate || !strings.Contains(dup.Error(), "SiDuplicate (193)") {
		t.Fatalf("same name twice: %v", dup)
	}
	// errors.Is matches on the code alone, through wrapping too.
	wrapped := fmt.Errorf("loading: %w", dup)
	if !errors.Is(dup, &spmierr.Error{Code: spmierr.SiDuplicate}) || !errors.Is(wrapped, &spmierr.Error{Code: spmierr.SiDuplicate}) {
		t.Fatal("errors.Is does not match an SiDuplicate error on its code")
	}
	if errors.Is(wrapped, &spmierr.Error{Code: spmierr.SiNotFound}) || errors.Is(wrapped, errors.New(dup.Error())) {
		t.Fatal("errors.Is matches an SiDuplicate error with another code or type")
	}
	other := CxDesc{Name: "Other", Descr: "x", ASN: 1}
	_, err := b.Context(nil, &other)
	if spmierr.CodeOf(err) != spmierr.SiDuplicate || !strings.Contains(err.Error(), "ASN.1 number 1") {
		t.Fatalf("same ASN twice: %v", err)
	}
	long := CxDesc{Name: strings.Repeat("x", 32), ASN: 7}
	if _, err := b.Context(nil, &long); spmierr.CodeOf(err) != spmierr.SiBadArgument || !strings.Contains(err.Error(), "187") {
		t.Fatalf("long name: %v", err)
	}
	longD := spmiwire.StatDesc{Name: "x", Descr: strings.Repeat("d", 64), ASN: 9}
	if err := b.Stat(cpu, &longD, spmiwire.NoValue); spmierr.CodeOf(err) != spmierr.SiBadArgument {
		t.Fatalf("long description: %v", err)
	}
	mem, _ := b.Context(nil, &CxDesc{Name: "Mem", ASN: 2})
	if _, err := b.Instance(mem, &cpuInst, "x", "", 0); spmierr.CodeOf(err) != spmierr.SiNotInst {
		t.Fatalf("instance of non-instantiable: %v", err)
	}
	if err := b.Stat(b.Top(), &idle, spmiwire.NoValue); spmierr.CodeOf(err) != spmierr.SiBadArgument {
		t.Fatalf("stat on Top: %v", err)
	}
}

func TestAllocatedNumbersPersistAndAreNeverReused(t *testing.T) {
	file := filepath.Join(t.TempDir(), "state", "numbering.json")
	build := func(num *Numbering, disks ...string) *Snapshot {
		b := NewBuilder(testBase, num, time.Now())
		d, _ := b.Context(nil, &diskCx)
		if err := b.Stat(d, &spmiwire.StatDesc{Name: "total", ASN: 1, Val: ddswire.SiQuantity}, spmiwire.Int(1)); err != nil {
			t.Fatal(err)
		}
		for _, name := range disks {
			if _, err := b.Instance(d, &cpuInst, name, "", 0); err != nil {
				t.Fatal(err)
			}
		}
		return b.Finish()
	}
	asn := func(s *Snapshot, p string) uint32 {
		n, err := s.Lookup(p)
		if err != nil {
			t.Fatal(err)
		}
		return n.ASN
	}
	num := NewNumbering(file)
	s := build(num, "sda", "sdb")
	if asn(s, "Disk/sda") != 2 || asn(s, "Disk/sdb") != 3 {
		t.Fatalf("allocation must skip the context's own statistic 1: sda=%d sdb=%d", asn(s, "Disk/sda"), asn(s, "Disk/sdb"))
	}
	s = build(num, "sdb", "sdc") // sda vanished: its number stays sda's
	if asn(s, "Disk/sdb") != 3 || asn(s, "Disk/sdc") != 4 {
		t.Fatalf("sdb=%d sdc=%d", asn(s, "Disk/sdb"), asn(s, "Disk/sdc"))
	}
	if err := num.Save(); err != nil {
		t.Fatal(err)
	}
	again, err := LoadNumbering(file)
	if err != nil {
		t.Fatal(err)
	}
	s = build(again, "sdc", "sda", "sdd")
	if asn(s, "Disk/sda") != 2 || asn(s, "Disk/sdc") != 4 || asn(s, "Disk/sdd") != 5 {
		t.Fatalf("after restart sda=%d sdc=%d sdd=%d", asn(s, "Disk/sda"), asn(s, "Disk/sdc"), asn(s, "Disk/sdd"))
	}
}

func TestDamagedNumberingFileIsNamed(t *testing.T) {
	file := filepath.Join(t.TempDir(), "n.json")
	os.WriteFile(file, []byte("{not json"), 0o644)
	if _, err := LoadNumbering(file); err == nil || !strings.Contains(err.Error(), file) {
		t.Fatalf("damaged file: %v", err)
	}
	os.WriteFile(file, []byte(`{"version":1,"contexts":{"Disk":{"a":2,"b":2}}}`), 0o644)
	if _, err := LoadNumbering(file); err == nil || !strings.Contains(err.Error(), "share number 2") {
		t.Fatalf("shared number: %v", err)
	}
}

func TestNoValueIsHiddenFromViewButListed(t *testing.T) {
	b := NewBuilder(testBase, nil, time.Now())
	d, _ := b.Context(nil, &CxDesc{Name: "Disk", ASN: 4})
	b.Stat(d, &busy, spmiwire.NoValue)
	b.Stat(d, &spmiwire.StatDesc{Name: "q", ASN: 2, Val: ddswire.SiQuantity}, spmiwire.Int(3))
	b.Fail("/proc/diskstats", errors.New("broken"))
	s := b.Finish()
	if s.Values().Len() != 1 || s.ViewLen() != 1 || s.Top.Children[0].NumChildren() != 2 {
		t.Fatalf("view %d, %d entries", s.Values().Len(), s.ViewLen())
	}
	smp, _ := s.Read([]string{"Disk/busy", "Disk/q", "Disk/none", "Disk/"})
	codes := []spmierr.Code{spmierr.SiNoValue, spmierr.SiSuccess, spmierr.SiNotFound, spmierr.SiBadArgument}
	for i, it := range smp.Items {
		got := spmierr.SiSuccess
		if it.Err != nil {
			got = it.Err.Code
		}
		if got != codes[i] {
			t.Errorf("%s: %v, want %v", it.Path, got, codes[i])
		}
	}
	if s.Failures["/proc/diskstats"] == nil {
		t.Error("failure not recorded")
	}
}

func TestSNMPMapping(t *testing.T) {
	cases := []struct {
		d    spmiwire.StatDesc
		v    spmiwire.Value
		kind asn1tree.Kind
		num  uint64
	}{
		{spmiwire.StatDesc{Val: ddswire.SiCounter}, spmiwire.Uint(math.MaxUint64), asn1tree.Counter64, math.MaxUint64},
		{spmiwire.StatDesc{Val: ddswire.SiQuantity}, spmiwire.Int(7), asn1tree.Gauge32, 7},
		{spmiwire.StatDesc{Val: ddswire.SiQuantity}, spmiwire.Uint(1 << 40), asn1tree.Gauge32, math.MaxUint32},
		{spmiwire.StatDesc{Val: ddswire.SiQuantity, Wide: true}, spmiwire.Uint(1 << 40), asn1tree.Counter64, 1 << 40},
		{spmiwire.StatDesc{Val: ddswire.SiQuantity, Min: -100}, spmiwire.Int(-5), asn1tree.Integer32, uint64(math.MaxUint64 - 4)},
		{spmiwire.StatDesc{Val: ddswire.SiQuantity, Min: -1}, spmiwire.Int(-1 << 40), asn1tree.Integer32, uint64(1<<64 - 1<<31)},
		{spmiwire.StatDesc{Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 2}, spmiwire.Float(12.345), asn1tree.Gauge32, 1235},
		{spmiwire.StatDesc{Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 2}, spmiwire.Float(-3), asn1tree.Gauge32, 0},
	}
	for i, c := range cases {
		got := SNMPValue(&c.d, c.v)
		if got.Kind != c.kind || got.Num != c.num {
			t.Errorf("case %d: %v %d, want %v %d", i, got.Kind, got.Num, c.kind, c.num)
		}
	}
	txt := spmiwire.StatDesc{Data: spmiwire.SiText}
	if v := SNMPValue(&txt, spmiwire.Text("bash")); v.Kind != asn1tree.OctetString || v.Str != "bash" {
		t.Errorf("text: %v", v)
	}
	// Text longer than a DisplayString is cut to 255 octets, never
	// inside a character: 254 octets and "é" (2) give 254.
	long := strings.Repeat("x", 254) + "é" + strings.Repeat("y", 100)
	if v := SNMPValue(&txt, spmiwire.Text(long)); v.Str != long[:254] {
		t.Errorf("text of %d octets served as %d: %q...", len(long), len(v.Str), v.Str[len(v.Str)-3:])
	}
	if v := SNMPValue(&txt, spmiwire.Text(long[:MaxDisplayString+1])); len(v.Str) != 254 {
		t.Errorf("text of 256 octets served as %d", len(v.Str))
	}
	if s := strings.Repeat("z", MaxDisplayString+3); SNMPValue(&txt, spmiwire.Text(s)).Str != s[:MaxDisplayString] {
		t.Errorf("ASCII text not cut at %d octets", MaxDisplayString)
	}
	if v := SNMPValue(&idle, spmiwire.NoValue); v.Kind != asn1tree.NoValue {
		t.Errorf("no value: %v", v)
	}
}

// counterSource steps a counter "a" by 100 and a level "b" by 1 per read,
// two seconds apart.
type counterSource struct {
	n int
	t time.Time
}

func (c *counterSource) Read(_ context.Context, paths []string) (spmiwire.Sample, error) {
	c.n++
	c.t = c.t.Add(2 * time.Second)
	out := spmiwire.Sample{Time: c.t}
	for _, p := range paths {
		switch p {
		case "a":
			out.Items = append(out.Items, spmiwire.Item{Path: p, Stat: &spmiwire.StatDesc{Val: ddswire.SiCounter}, Value: spmiwire.Uint(uint64(100 * c.n))})
		case "b":
			out.Items = append(out.Items, spmiwire.Item{Path: p, Stat: &spmiwire.StatDesc{Val: ddswire.SiQuantity}, Value: spmiwire.Int(int64(c.n))})
		default:
			out.Items = append(out.Items, spmiwire.Item{Path: p, Err: &spmierr.Error{Code: spmierr.SiNotFound}})
		}
	}
	return out, nil
}

func TestStatSetRatesAndLevels(t *testing.T) {
	ss, err := consumer.NewPathSet(context.Background(), &counterSource{t: time.Unix(0, 0)}, "a", "b")
	if err != nil {
		t.Fatal(err)
	}
	r1, _ := ss.Read(context.Background())
	if r1.Elapsed != 0 || r1.Values[0].HasRate {
		t.Fatalf("first read has no rate: %+v", r1)
	}
	r2, _ := ss.Read(context.Background())
	if r2.Elapsed != 2*time.Second || r2.Values[0].Change != 100 || r2.Values[0].Rate != 50 {
		t.Fatalf("counter: %+v elapsed %v", r2.Values[0], r2.Elapsed)
	}
	if r2.Values[1].HasRate || r2.Values[1].Value.String() != "3" {
		t.Fatalf("quantity is a level: %+v", r2.Values[1])
	}
	if spmiwire.CounterChange(spmiwire.Uint(10), spmiwire.Uint(5)) != 0 {
		t.Fatal("a counter reset is no change, not a wrap")
	}
}

func TestStatSetRefusesUnknownPaths(t *testing.T) {
	b := NewBuilder(testBase, nil, time.Now())
	c, _ := b.Context(nil, &cpuCx)
	b.Stat(c, &idle, spmiwire.Uint(1))
	h := NewHierarchy(Config{Base: testBase, MinAge: time.Hour})
	h.snap.Store(b.Finish())
	_, err := consumer.NewPathSet(context.Background(), h, "CPU/idle", "CPU/nope")
	if spmierr.CodeOf(err) != spmierr.SiNotFound || !strings.Contains(err.Error(), "CPU/nope") {
		t.Fatalf("unknown path: %v", err)
	}
}

type countingProvider struct{ calls int }

func (p *countingProvider) Name() string { return "count" }
func (p *countingProvider) Collect(b *Builder) error {
	p.calls++
	c, err := b.Context(nil, &cpuCx)
	if err != nil {
		return err
	}
	return b.Stat(c, &idle, spmiwire.Uint(uint64(p.calls)))
}

func TestFreshHonoursMinimumAge(t *testing.T) {
	p := &countingProvider{}
	h := NewHierarchy(Config{Base: testBase, MinAge: time.Hour})
	h.Add(p)
	h.Fresh()
	h.Fresh()
	h.FreshWithin(time.Millisecond)
	if p.calls != 1 {
		t.Fatalf("refreshed %d times within the minimum age", p.calls)
	}
	h2 := NewHierarchy(Config{Base: testBase, MinAge: 0})
	h2.Add(p)
	h2.Fresh()
	h2.Fresh()
	if p.calls != 3 {
		t.Fatalf("calls = %d, want 3", p.calls)
	}
	if st := h2.Stats(); st.Refreshes != 2 {
		t.Fatalf("refreshes %d", st.Refreshes)
	}
}

type slowProvider struct{ release chan struct{} }

func (p *slowProvider) Name() string { return "slow" }
func (p *slowProvider) Collect(b *Builder) error {
	<-p.release
	return nil
}

func TestFreshWithinNeverWaitsLongerThanAsked(t *testing.T) {
	p := &slowProvider{release: make(chan struct{})}
	h := NewHierarchy(Config{Base: testBase, MinAge: 0})
	h.Add(p)
	close(p.release)
	first := h.Fresh()
	p.release = make(chan struct{})
	t0 := time.Now()
	s := h.FreshWithin(50 * time.Millisecond)
	if d := time.Since(t0); d > time.Second {
		t.Fatalf("waited %v", d)
	}
	if s != first {
		t.Fatal("a stalled refresh must leave the previous snapshot in service")
	}
	close(p.release)
}

// selfProvider reports the hierarchy's own statistics, as the daemon's
// Agent context does, from inside a refresh.
type selfProvider struct{ h *Hierarchy }

func (p selfProvider) Name() string { return "Agent" }
func (p selfProvider) Collect(b *Builder) error {
	c, err := b.Context(nil, &CxDesc{Name: "Agent", ASN: 12})
	if err != nil {
		return err
	}
	return b.Stat(c, &spmiwire.StatDesc{Name: "refreshes", ASN: 3, Val: ddswire.SiCounter}, spmiwire.Uint(p.h.Stats().Refreshes))
}

func TestProvidersMayReadRefreshStatsDuringARefresh(t *testing.T) {
	h := NewHierarchy(Config{Base: testBase})
	h.Add(selfProvider{h})
	done := make(chan *Snapshot)
	go func() { h.Refresh(); done <- h.Refresh() }()
	select {
	case s := <-done:
		n, _ := s.Lookup("Agent/refreshes")
		if n.Value.String() != "1" {
			t.Fatalf("second refresh sees %s refreshes before it", n.Value)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("refresh deadlocked")
	}
}

func TestInvalidateRefreshesWithinMinAge(t *testing.T) {
	var n atomic.Int32
	h := NewHierarchy(Config{Base: asn1tree.MustParse("1.3.6.1.4.1.32473.1"), MinAge: time.Hour})
	h.Add(providerFunc(func(*Builder) error { n.Add(1); return nil }))
	h.Fresh()
	h.Fresh()
	h.FreshWithin(time.Second)
	if got := n.Load(); got != 1 {
		t.Fatalf("%d refreshes within min_age, want 1", got)
	}
	h.Invalidate()
	h.FreshWithin(time.Second)
	h.Fresh()
	if got := n.Load(); got != 2 {
		t.Fatalf("%d refreshes after Invalidate, want 2 (one, then cached again)", got)
	}
	h.Invalidate()
	h.Fresh()
	if got := n.Load(); got != 3 {
		t.Fatalf("%d refreshes after a second Invalidate, want 3", got)
	}
}

// With no wait a stale snapshot is served at once while the rebuild runs
// in the background; the next request after it sees the new one.
func TestFreshWithinZeroNeverWaits(t *testing.T) {
	p := &slowProvider{release: make(chan struct{})}
	h := NewHierarchy(Config{Base: testBase, MinAge: 0})
	h.Add(p)
	close(p.release)
	first := h.Fresh()
	p.release = make(chan struct{})
	for range 3 {
		if s := h.FreshWithin(0); s != first {
			t.Fatal("a request waited for the rebuild or got a half-built snapshot")
		}
	}
	close(p.release)
	testutil.Eventually(t, "the background rebuild to publish", 5*time.Second, func() bool { return h.Current() != first })
	if st := h.Stats(); st.Refreshes != 2 {
		t.Errorf("%d refreshes, want 2 (requests during a rebuild share it)", st.Refreshes)
	}
}
