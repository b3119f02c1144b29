package expr

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/spmi"
)

// Elem is one instance's value of a per-instance result.
type Elem struct {
	Key   string // the names the wildcards matched, joined by /
	Value float64
	// ASN is the number of the instance one wildcard matched (a disk's,
	// a process's PID), 0 with several: derived statistics number their
	// instances as their source does.
	ASN uint32
}

// Result is one evaluation. A scalar result has OK false when a value it
// needs is missing (a counter's first reading, a division by zero); a
// per-instance one leaves such instances out of Elems.
type Result struct {
	Vector bool
	Value  float64
	OK     bool
	Elems  []Elem // sorted by Key
	Cost   int    // value operations done, at most the expression's Bound
}

// sample is a counter's reading, with its rate since the previous one
// (ok false: none).
type sample struct {
	v    spmiwire.Value
	t    time.Time
	rate float64
	ok   bool
}

// Rates remembers the counters read at the previous evaluation, so that
// every expression evaluated through one Rates reads a counter's rate
// over the same interval. It is used by one goroutine at a time.
type Rates struct {
	prev, cur map[string]sample
}

// NewRates returns an empty memory of counters.
func NewRates() *Rates { return &Rates{prev: map[string]sample{}, cur: map[string]sample{}} }

// Env is one evaluation over a snapshot: every expression evaluated in it
// reads the same values.
type Env struct {
	snap  *spmi.Snapshot
	ans   *spmi.Answer
	rates *Rates
	// paths are the paths read so far, as read (rates or raw), so that
	// expressions sharing a path resolve and sort its instances once.
	paths map[pathKey]value
}

type pathKey struct {
	path string
	raw  bool
}

// Begin starts an evaluation over snap; End finishes it.
func (r *Rates) Begin(snap *spmi.Snapshot) *Env {
	return &Env{snap: snap, ans: snap.Answer(), rates: r, paths: map[pathKey]value{}}
}

// End keeps the counters read in this evaluation for the next one's
// rates; those not read are forgotten.
func (e *Env) End() {
	r := e.rates
	r.prev, r.cur = r.cur, make(map[string]sample, len(r.cur))
}

// Snapshot is the snapshot evaluated.
func (e *Env) Snapshot() *spmi.Snapshot { return e.snap }

type value struct {
	vec   bool
	v     float64
	ok    bool
	elems []Elem
}

type evaluator struct {
	env  *Env
	cost int
}

// Eval evaluates x in env. Its error is a path that matches nothing (with
// the nearest that does), text, or a path matching more than
// MaxInstances instances.
func (x *Expr) Eval(env *Env) (Result, error) {
	ev := &evaluator{env: env}
	v, err := ev.eval(x.root)
	if err != nil {
		return Result{Vector: x.root.vec, Cost: ev.cost}, err
	}
	return Result{Vector: v.vec, Value: v.v, OK: v.ok, Elems: v.elems, Cost: ev.cost}, nil
}

func (ev *evaluator) eval(n *node) (value, error) {
	switch n.op {
	case opNum:
		ev.cost++
		return value{v: n.num, ok: true}, nil
	case opPath, opRate, opRaw:
		p := n
		if n.op != opPath {
			p = n.x
		}
		return ev.path(p, n.op)
	}
	x, err := ev.eval(n.x)
	if err != nil {
		return x, err
	}
	if n.op.aggregates() {
		ev.cost += len(x.elems)
		return aggregate(n.op, x.elems), nil
	}
	if n.y == nil { // opNeg, opNot, opAbs
		return ev.each(x, func(a float64) (float64, bool) { return unary(n.op, a) }), nil
	}
	y, err := ev.eval(n.y)
	if err != nil {
		return y, err
	}
	return ev.binary(n.op, x, y), nil
}

func unary(o op, a float64) (float64, bool) {
	switch o {
	case opNeg:
		return -a, true
	case opNot:
		return b2f(a == 0), true
	}
	return math.Abs(a), true
}

func (ev *evaluator) each(x value, f func(float64) (float64, bool)) value {
	if !x.vec {
		ev.cost++
		if x.ok {
			x.v, x.ok = f(x.v)
		}
		return x
	}
	ev.cost += len(x.elems)
	out := make([]Elem, 0, len(x.elems))
	for _, e := range x.elems {
		if v, ok := f(e.Value); ok {
			out = append(out, Elem{e.Key, v, e.ASN})
		}
	}
	return value{vec: true, elems: out}
}

// binary applies o: between two scalars, to each instance with a scalar,
// or between the instances of the same name of two per-instance values.
func (ev *evaluator) binary(o op, x, y value) value {
	f := func(a, b float64) (float64, bool) { return apply(o, a, b) }
	switch {
	case !x.vec && !y.vec:
		ev.cost++
		if !x.ok || !y.ok {
			return value{}
		}
		v, ok := f(x.v, y.v)
		return value{v: v, ok: ok}
	case !y.vec:
		if !y.ok {
			return value{vec: true}
		}
		return ev.each(x, func(a float64) (float64, bool) { return f(a, y.v) })
	case !x.vec:
		if !x.ok {
			return value{vec: true}
		}
		return ev.each(y, func(b float64) (float64, bool) { return f(x.v, b) })
	}
	ev.cost += len(x.elems) + len(y.elems)
	out := make([]Elem, 0, min(len(x.elems), len(y.elems)))
	for i, j := 0, 0; i < len(x.elems) && j < len(y.elems); {
		a, b := x.elems[i], y.elems[j]
		switch {
		case a.Key < b.Key:
			i++
		case a.Key > b.Key:
			j++
		default:
			if v, ok := f(a.Value, b.Value); ok {
				out = append(out, Elem{a.Key, v, a.ASN})
			}
			i, j = i+1, j+1
		}
	}
	return value{vec: true, elems: out}
}

// apply is a binary operator; a result that is not a finite number (a
// division by zero) is no value.
func apply(o op, a, b float64) (float64, bool) {
	var v float64
	switch o {
	case opAdd:
		v = a + b
	case opSub:
		v = a - b
	case opMul:
		v = a * b
	case opDiv:
		v = a / b
	case opMod:
		v = math.Mod(a, b)
	case opLT:
		v = b2f(a < b)
	case opLE:
		v = b2f(a <= b)
	case opGT:
		v = b2f(a > b)
	case opGE:
		v = b2f(a >= b)
	case opEQ:
		v = b2f(a == b)
	case opNE:
		v = b2f(a != b)
	case opAnd:
		v = b2f(a != 0 && b != 0)
	case opOr:
		v = b2f(a != 0 || b != 0)
	}
	return v, !math.IsNaN(v) && !math.IsInf(v, 0)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func aggregate(o op, es []Elem) value {
	if o == opCount {
		return value{v: float64(len(es)), ok: true}
	}
	if len(es) == 0 {
		return value{}
	}
	v := es[0].Value
	for _, e := range es[1:] {
		switch o {
		case opSum, opAvg:
			v += e.Value
		case opMin:
			v = min(v, e.Value)
		case opMax:
			v = max(v, e.Value)
		}
	}
	if o == opAvg {
		v /= float64(len(es))
	}
	return value{v: v, ok: !math.IsInf(v, 0)}
}

// match is one statistic a path matched, with the names its wildcards
// matched.
type match struct {
	key  string
	asn  uint32 // the instance's number when one wildcard matched it
	stat *spmi.Node
}

// path reads the statistics p matches: counters as rates (fn opPath or
// opRate), or as read (opRaw).
func (ev *evaluator) path(p *node, fn op) (value, error) {
	key := pathKey{p.path, fn == opRaw}
	if v, ok := ev.env.paths[key]; ok && fn != opRate { // rate() checks its statistics below
		ev.cost += max(len(v.elems), 1)
		return v, nil
	}
	v, err := ev.readPath(p, fn)
	if err == nil {
		ev.env.paths[key] = v // values are never changed in place: shared
	}
	return v, err
}

func (ev *evaluator) readPath(p *node, fn op) (value, error) {
	var ms []match
	if err := resolve(ev.env.snap.Top, p.parts, nil, 0, &ms); err != nil {
		return value{}, fmt.Errorf("%s: %w", p.path, err)
	}
	if len(ms) == 0 {
		msg := fmt.Sprintf("%s matches no statistic", p.path)
		if s := Suggest(ev.env.snap, p.parts); s != "" {
			msg += "; did you mean " + s + "?"
		}
		return value{}, spmierr.Errorf(spmierr.SiNotFound, "%s", msg)
	}
	ev.cost += len(ms)
	out := value{vec: p.vec}
	if p.vec {
		out.elems = make([]Elem, 0, len(ms))
	}
	for _, m := range ms {
		st := m.stat.Stat
		if st.Data == spmiwire.SiText {
			return value{}, spmierr.Errorf(spmierr.SiBadArgument, "%s is text; expressions compute numbers", m.stat.Path)
		}
		if fn == opRate && st.Val != ddswire.SiCounter {
			return value{}, spmierr.Errorf(spmierr.SiBadArgument, "rate(%s): %s is a quantity, not a counter", p.path, m.stat.Path)
		}
		v, ok := ev.read(m.stat, fn == opRaw)
		switch {
		case !p.vec:
			out.v, out.ok = v, ok
		case ok:
			out.elems = append(out.elems, Elem{m.key, v, m.asn})
		}
	}
	if p.vec {
		sort.Slice(out.elems, func(i, j int) bool { return out.elems[i].Key < out.elems[j].Key })
	}
	return out, nil
}

// read is a statistic's value: a quantity's level, a counter's rate per
// second since the previous evaluation (none at the first, or when the
// counter went backwards), or its count with raw.
func (ev *evaluator) read(n *spmi.Node, raw bool) (float64, bool) {
	v := ev.env.ans.Value(n)
	if !v.OK() {
		return 0, false
	}
	if raw || n.Stat.Val != ddswire.SiCounter {
		return v.Float64(), true
	}
	r, t := ev.env.rates, ev.env.snap.Time
	if c, ok := r.cur[n.Path]; ok { // read by another expression of this evaluation
		return c.rate, c.ok
	}
	c := sample{v: v, t: t}
	if p, ok := r.prev[n.Path]; ok && t.After(p.t) {
		c.rate, c.ok = rate(p, c)
	}
	r.cur[n.Path] = c
	return c.rate, c.ok
}

// rate is a counter's change per second from p to c; none when it went
// backwards (a reset: its change is unknown, never a huge number).
func rate(p, c sample) (float64, bool) {
	a, b := p.v.Float64(), c.v.Float64()
	secs := c.t.Sub(p.t).Seconds()
	if pu, cu := p.v.Uint64(), c.v.Uint64(); float64(pu) == a && float64(cu) == b {
		if cu < pu {
			return 0, false
		}
		return float64(cu-pu) / secs, true
	}
	if b < a {
		return 0, false
	}
	return (b - a) / secs, true
}

// resolve appends the statistics below n that parts matches. A wildcard
// matches the instances of an instantiable context (not its aggregate,
// CPU/total) or the subcontexts of another.
func resolve(n *spmi.Node, parts []string, key []string, asn uint32, out *[]match) error {
	if len(parts) == 0 {
		return nil
	}
	part, last := parts[0], len(parts) == 1
	if part != "*" {
		c := n.Child(part)
		switch {
		case c == nil:
		case last && c.IsStat():
			if len(key) != 1 {
				asn = 0
			}
			*out = append(*out, match{strings.Join(key, "/"), asn, c})
		case !last && !c.IsStat():
			return resolve(c, parts[1:], key, asn, out)
		}
		return nil
	}
	inst := n.Inst() != ddswire.SiNoInst
	for _, c := range n.Children {
		if c.IsStat() || (inst && !c.Instance) || c.Aggregate() {
			continue
		}
		if err := resolve(c, parts[1:], append(key, c.Name), c.ASN, out); err != nil {
			return err
		}
		if len(*out) > MaxInstances {
			return spmierr.Errorf(spmierr.SiBadArgument, "matches more than %d instances", MaxInstances)
		}
	}
	return nil
}
