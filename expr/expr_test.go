package expr

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/spmi"
)

var (
	diskCx  = spmi.CxDesc{Name: "Disk", Descr: "Disks", ASN: 4, Inst: ddswire.SiCfgInst}
	diskTpl = spmi.CxDesc{Descr: "Disk"}
	totCx   = spmi.CxDesc{Name: "total", Descr: "All disks", ASN: 1000, Aggregate: true}
	diskSt  = []spmiwire.StatDesc{
		{Name: "busy", Descr: "busy", ASN: 1, Max: 100, Val: ddswire.SiCounter, Units: "1/100 s"},
		{Name: "qlen", Descr: "qlen", ASN: 2, Max: 64, Val: ddswire.SiQuantity},
		{Name: "model", Descr: "model", ASN: 3, Val: ddswire.SiQuantity, Data: spmiwire.SiText},
	}
	memCx = spmi.CxDesc{Name: "Mem", Descr: "Memory", ASN: 2}
	memSt = []spmiwire.StatDesc{
		{Name: "free", Descr: "free", ASN: 1, Max: 100, Val: ddswire.SiQuantity},
		{Name: "size", Descr: "size", ASN: 2, Max: 100, Val: ddswire.SiQuantity},
		{Name: "%free", Descr: "free", ASN: 3, Max: 100, Val: ddswire.SiQuantity, Data: spmiwire.SiFloat},
	}
)

// host is a snapshot's values: each disk's busy counter and queue
// length, and memory free and size.
type host struct {
	busy map[string]uint64
	qlen map[string]int64
	free int64
	size int64
}

func (h host) snap(t testing.TB, at time.Time) *spmi.Snapshot {
	t.Helper()
	b := spmi.NewBuilder(asn1tree.OID{1, 3, 6, 1, 4, 1, 32473, 1}, nil, at)
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	m, err := b.Context(nil, &memCx)
	must(err)
	must(b.Stats(m, memSt, []spmiwire.Value{spmiwire.Int(h.free), spmiwire.Int(h.size), spmiwire.Float(float64(h.free) / float64(max(h.size, 1)) * 100)}))
	d, err := b.Context(nil, &diskCx)
	must(err)
	tot, err := b.Context(d, &totCx)
	must(err)
	must(b.Stats(tot, diskSt, []spmiwire.Value{spmiwire.Uint(0), spmiwire.Int(0), spmiwire.Text("all")}))
	for _, name := range []string{"sda", "sdb", "sdc"} {
		if _, ok := h.busy[name]; !ok {
			continue
		}
		inst, err := b.Instance(d, &diskTpl, name, "", 0)
		must(err)
		must(b.Stats(inst, diskSt, []spmiwire.Value{spmiwire.Uint(h.busy[name]), spmiwire.Int(h.qlen[name]), spmiwire.Text("m")}))
	}
	return b.Finish()
}

func eval(t *testing.T, r *Rates, s *spmi.Snapshot, src string) Result {
	t.Helper()
	x, err := Parse(src)
	if err != nil {
		t.Fatalf("Parse(%q): %v", src, err)
	}
	env := r.Begin(s)
	res, err := x.Eval(env)
	if err != nil {
		t.Fatalf("Eval(%q): %v", src, err)
	}
	if res.Cost > x.Bound() {
		t.Fatalf("Eval(%q) cost %d > bound %d", src, res.Cost, x.Bound())
	}
	return res
}

func TestScalarArithmeticAndBooleans(t *testing.T) {
	s := host{free: 25, size: 200}.snap(t, time.Unix(1000, 0))
	cases := []struct {
		src  string
		want float64
	}{
		{"Mem/free / Mem/size * 100", 12.5},
		{"100 * Mem/free / Mem/size < 20", 1},
		{"(Mem/free + 5) * 2 - -1", 61},
		{"Mem/size % 7", 4},
		{"Mem/free < 10 || Mem/size > 100 && !(Mem/free == 25)", 0},
		{"not Mem/free < 10 and Mem/size != 0", 1},
		{"abs(3 - Mem/free)", 22},
		{"1.5e2 + .5", 150.5},
		{"Mem/%free * 2", 25}, // % starts a name inside a path (Mem/Real/%free)
	}
	for _, c := range cases {
		r := eval(t, NewRates(), s, c.src)
		if r.Vector || !r.OK || r.Value != c.want {
			t.Errorf("%q = %+v, want scalar %v", c.src, r, c.want)
		}
	}
	if r := eval(t, NewRates(), s, "Mem/free / (Mem/size - 200)"); r.OK {
		t.Errorf("a division by zero gave a value: %+v", r)
	}
}

func TestPerInstanceAndAggregates(t *testing.T) {
	r := NewRates()
	h := host{busy: map[string]uint64{"sda": 100, "sdb": 1000, "sdc": 0}, qlen: map[string]int64{"sda": 1, "sdb": 4, "sdc": 7}, free: 1, size: 2}
	s0 := h.snap(t, time.Unix(1000, 0))
	// The first evaluation has no rate: busy yields nothing, qlen its levels.
	if res := eval(t, r, s0, "Disk/*/busy + Disk/*/qlen"); !res.Vector || len(res.Elems) != 0 {
		t.Fatalf("first evaluation gave rates: %+v", res)
	}
	r.Begin(s0).End()
	h.busy = map[string]uint64{"sda": 300, "sdb": 1500, "sdc": 0}
	s1 := h.snap(t, time.Unix(1010, 0)) // 10 s later: sda 20/s, sdb 50/s, sdc 0/s
	env := r.Begin(s1)
	check := func(src string, want float64) {
		t.Helper()
		x, err := Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		res, err := x.Eval(env)
		if err != nil || res.Vector || !res.OK || math.Abs(res.Value-want) > 1e-9 {
			t.Errorf("%q = %+v, %v; want %v", src, res, err, want)
		}
	}
	check("sum(Disk/*/busy)", 70)
	check("avg(Disk/*/busy)", 70.0/3)
	check("max(Disk/*/busy)", 50)
	check("min(Disk/*/qlen)", 1)
	check("count(Disk/*/busy > 10)", 3) // a comparison is 0 or 1 per disk
	check("sum(Disk/*/busy > 10)", 2)
	check("sum(raw(Disk/*/busy))", 1800)
	check("sum(rate(Disk/*/busy))", 70)
	check("Disk/sdb/busy / Disk/sda/busy", 2.5)
	x, _ := Parse("Disk/*/busy + Disk/*/qlen * 2")
	res, err := x.Eval(env)
	if err != nil {
		t.Fatal(err)
	}
	// Each carries the number of its disk, as the snapshot has it.
	want := []Elem{{Key: "sda", Value: 22}, {Key: "sdb", Value: 58}, {Key: "sdc", Value: 14}}
	for i := range want {
		n, err := s1.Lookup("Disk/" + want[i].Key + "/")
		if err != nil {
			t.Fatal(err)
		}
		want[i].ASN = n.ASN
	}
	if !res.Vector || len(res.Elems) != len(want) {
		t.Fatalf("per-instance = %+v, want %v", res, want)
	}
	for i := range want {
		if res.Elems[i] != want[i] {
			t.Errorf("per-instance[%d] = %v, want %v (Disk/total is an aggregate, no instance)", i, res.Elems[i], want[i])
		}
	}
	if want[0].ASN == want[1].ASN {
		t.Errorf("disks numbered alike: %v", want)
	}
}

func TestCounterResetHasNoRate(t *testing.T) {
	r := NewRates()
	h := host{busy: map[string]uint64{"sda": 500}, qlen: map[string]int64{}}
	r.Begin(h.snap(t, time.Unix(1000, 0))).End()
	h.busy["sda"] = 100
	if res := eval(t, r, h.snap(t, time.Unix(1001, 0)), "Disk/sda/busy"); res.OK {
		t.Errorf("a counter that went backwards gave a rate: %+v", res)
	}
}

func TestParseErrors(t *testing.T) {
	cases := map[string]string{
		"":                        "empty",
		"sum(Mem/free)":           "needs values per instance",
		"rate(1 + 2)":             "takes a path",
		"Mem/free +":              "unexpected end",
		"(Mem/free":               "missing )",
		"a < b < c":               "neither a function",
		"Mem/free < 1 < 2":        "do not chain",
		"Disk/*/busy*2":           "* stands for a whole part",
		"Disk/*":                  "ends in *",
		"Disk//busy":              "empty part",
		"foo(Mem/free)":           "neither a function",
		"Mem/free & 1":            "unexpected character",
		"busy":                    "nor a path",
		strings.Repeat("(", 40):   "nested deeper",
		strings.Repeat("1+", 200): "more than",
	}
	for src, want := range cases {
		if _, err := Parse(src); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want an error with %q", src, err, want)
		}
	}
}

func TestEvalErrorsNameTheNearestPath(t *testing.T) {
	s := host{busy: map[string]uint64{"sda": 1}, qlen: map[string]int64{"sda": 1}}.snap(t, time.Unix(1000, 0))
	cases := map[string]string{
		"sum(Dsik/*/bussy)":   "did you mean Disk/*/busy?",
		"Mem/fre":             "did you mean Mem/free?",
		"sum(Disk/*/model)":   "is text",
		"rate(Mem/free)":      "not a counter",
		"sum(Disk/*/nothing)": "matches no statistic",
	}
	for src, want := range cases {
		x, err := Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := x.Eval(NewRates().Begin(s)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Eval(%q) = %v, want an error with %q", src, err, want)
		}
	}
}
