package derive

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/expr"
	"github.com/perfagent/subagent/spmi"
)

// The contexts served (docs/TREE.md).
var (
	DerivedCx = spmi.CxDesc{Name: "Derived", Descr: "Derived statistics: named expressions of other statistics", ASN: spmi.ASNDerived}
	AlarmCx   = spmi.CxDesc{Name: "Alarm", Descr: "Alarms: one row per alarm instance that left inactive", ASN: spmi.ASNAlarm,
		Inst: ddswire.SiContInst, DescrStat: "name"}
	alarmRow = spmi.CxDesc{Descr: "Alarm instance"}
	// ExprCx is Agent/expr: each expression's last evaluation.
	ExprCx  = spmi.CxDesc{Name: "expr", Descr: "The derived statistics' and alarms' evaluation", ASN: spmi.ASNAgentExpr, Inst: ddswire.SiContInst}
	exprRow = spmi.CxDesc{Descr: "Expression"}

	alarmStats = []spmiwire.StatDesc{
		{Name: "name", Descr: "The alarm's name", ASN: 1, Val: ddswire.SiQuantity, Data: spmiwire.SiText},
		{Name: "instance", Descr: "Instance the wildcards matched (empty: the alarm has one value)", ASN: 2, Val: ddswire.SiQuantity, Data: spmiwire.SiText},
		{Name: "state", Descr: "inactive, pending, firing or clearing", ASN: 3, Val: ddswire.SiQuantity, Data: spmiwire.SiText},
		{Name: "since", Descr: "When it entered its state (seconds since 1970)", ASN: 4, Max: 1 << 31, Val: ddswire.SiQuantity, Units: "seconds since 1970", Form: spmiwire.FormTime},
		{Name: "value", Descr: "Value at the last evaluation, in decimal (empty: none)", ASN: 5, Val: ddswire.SiQuantity, Data: spmiwire.SiText},
		{Name: "severity", Descr: "The alarm's severity", ASN: 6, Max: 10, Val: ddswire.SiQuantity},
		{Name: "count", Descr: "Evaluations of the pending (true) or clearing (false) run", ASN: 7, Max: 10, Val: ddswire.SiQuantity},
	}
	exprTotals = []spmiwire.StatDesc{
		{Name: "evals", Descr: "Evaluations of all the expressions", ASN: 1, Max: 1, Val: ddswire.SiCounter},
		{Name: "evalms", Descr: "Last evaluation of all the expressions", ASN: 2, Max: 100, Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 3, Units: "milliseconds"},
		{Name: "cmdruns", Descr: "Alarm commands started", ASN: 3, Max: 1, Val: ddswire.SiCounter},
		{Name: "cmddropped", Descr: "Alarm commands not run: expressions.command_max were running", ASN: 4, Max: 1, Val: ddswire.SiCounter},
		{Name: "cmdkilled", Descr: "Alarm commands killed at expressions.command_timeout", ASN: 5, Max: 1, Val: ddswire.SiCounter},
		{Name: "cmdfailed", Descr: "Alarm commands that did not start or exited non-zero", ASN: 6, Max: 1, Val: ddswire.SiCounter},
	}
	exprStats = []spmiwire.StatDesc{
		{Name: "kind", Descr: "derived or alarm", ASN: 1, Val: ddswire.SiQuantity, Data: spmiwire.SiText},
		{Name: "evalus", Descr: "The expression's last evaluation", ASN: 2, Max: 1000, Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 1, Units: "microseconds"},
		{Name: "cost", Descr: "Value operations of the last evaluation", ASN: 3, Max: 1000, Val: ddswire.SiQuantity},
		{Name: "bound", Descr: "Most value operations an evaluation may cost", ASN: 4, Max: 1000, Val: ddswire.SiQuantity, Wide: true},
		{Name: "errmsg", Descr: "What went wrong at the last evaluation (empty: none)", ASN: 5, Val: ddswire.SiQuantity, Data: spmiwire.SiText},
	}
)

// valueStat is ASN 1 of every derived statistic's context or instance.
func valueStat(d *Derived) *spmiwire.StatDesc {
	s := &spmiwire.StatDesc{Name: "value", Descr: d.Descr, ASN: 1, Max: 100, Val: ddswire.SiQuantity, Data: spmiwire.SiFloat,
		Scale: d.Scale, Units: d.Units, Wide: !d.Signed}
	if d.Signed {
		s.Min = -100
	}
	if s.Descr == "" {
		s.Descr = d.X.String()
	}
	if len(s.Descr) > spmiwire.MaxDescr {
		s.Descr = s.Descr[:spmiwire.MaxDescr-3] + "..."
	}
	return s
}

// Provider serves the engine's derived statistics under Derived.
// Numbering gives each derived statistic its number under Derived, kept
// across restarts (nil: in memory).
//
// It is a spmi.StableProvider: Derived is rebuilt apart, and served when
// built, only when its shape changes (definitions, a per-instance
// statistic's instances), so that no request waits for it
// (spmi.Hierarchy.FreshWithin); its values are read live from the last
// evaluation.
type Provider struct {
	E         *Engine
	Numbering *spmi.Numbering
}

func (p Provider) Name() string { return "Derived" }

// Shape is the tree's layout.
func (p Provider) Shape() any { return p.E.pub.Load().layout }

func (p Provider) Collect(b *spmi.Builder) error {
	top, err := b.Context(nil, &DerivedCx)
	if err != nil {
		return err
	}
	e := p.E
	num := p.Numbering
	if num == nil {
		num = e.num
	}
	r := e.pub.Load()
	src := resultsSource{e, r, true}
	used := map[uint32]bool{}
	for i := range r.derived {
		d := &r.derived[i]
		asn, err := num.Assign("Derived", d.def.Name, func(k uint32) bool { return used[k] })
		if err != nil {
			return err
		}
		used[asn] = true
		descr := d.def.Descr
		if descr == "" {
			descr = d.def.X.String()
		}
		if len(descr) > spmiwire.MaxDescr {
			descr = descr[:spmiwire.MaxDescr-3] + "..."
		}
		cx := &spmi.CxDesc{Name: d.def.Name, Descr: descr, ASN: asn}
		if d.def.X.PerInstance() {
			cx.Inst = ddswire.SiContInst
		}
		n, err := b.Context(top, cx)
		if err != nil {
			return err
		}
		vs := valueStat(&d.def)
		if !d.def.X.PerInstance() {
			if err := b.LiveStat(n, vs, src, r.first[i]); err != nil {
				return err
			}
			continue
		}
		tpl := &spmi.CxDesc{Descr: descr}
		for j, el := range d.res.Elems {
			// Numbered as the source numbers it (a disk's, a PID), so
			// that its index is the source's; several wildcards: by the
			// persisted numbering.
			in, err := b.Instance(n, tpl, instName(el.Key), "", el.ASN)
			if err != nil {
				continue // a name the tree refuses (too long): left out
			}
			if err := b.LiveStat(in, vs, src, r.first[i]+uint32(j)); err != nil {
				return err
			}
		}
	}
	return nil
}

// resultsSource is a live source built from r: a pin reads the engine's
// last results while they fit what was built from r (Derived: the same
// layout; Agent/expr: the same expressions), else r.
type resultsSource struct {
	e       *Engine
	r       *results
	derived bool // Derived's values (derivedPin), else Agent/expr's figures
}

func (s resultsSource) Pin() spmi.LivePin {
	r := s.r
	if cur := s.e.pub.Load(); (s.derived && cur.layout == r.layout) || (!s.derived && cur.defs == r.defs) {
		r = cur
	}
	if s.derived {
		return derivedPin{r}
	}
	return r
}

// derivedPin reads field i: derived statistic k's value, or its
// element i - first[k] when it is per instance.
type derivedPin struct{ r *results }

func (p derivedPin) Value(i uint32) spmiwire.Value {
	r := p.r
	k := sort.Search(len(r.derived), func(k int) bool { return r.first[k+1] > i })
	if k == len(r.derived) {
		return spmiwire.NoValue
	}
	d := &r.derived[k]
	switch {
	case d.Err != nil:
		return spmiwire.NoValue
	case d.def.X.PerInstance():
		return spmiwire.Float(d.res.Elems[i-r.first[k]].Value)
	case d.res.OK:
		return spmiwire.Float(d.res.Value)
	}
	return spmiwire.NoValue
}

// instName is an instance key as a context name: the names several
// wildcards matched are joined by : (a name holds no /).
func instName(key string) string { return strings.ReplaceAll(key, "/", ":") }

// AlarmProvider serves the alarm instances' states as the Alarm table;
// a spmi.StableProvider as Provider is.
type AlarmProvider struct{ E *Engine }

func (p AlarmProvider) Name() string { return "Alarm" }

// Shape is the rows' version: the table is rebuilt when a row changes.
func (p AlarmProvider) Shape() any { return p.E.pub.Load().rowsVer }

func (p AlarmProvider) Collect(b *spmi.Builder) error {
	top, err := b.Context(nil, &AlarmCx)
	if err != nil {
		return err
	}
	rows := p.E.Rows()
	for i, r := range rows {
		in, err := b.Instance(top, &alarmRow, strconv.Itoa(i+1), r.Alarm, uint32(i+1))
		if err != nil {
			return err
		}
		val := ""
		if r.OK {
			val = FormatValue(r.Value)
		}
		if err := b.Stats(in, alarmStats, []spmiwire.Value{spmiwire.Text(r.Alarm), spmiwire.Text(r.Instance),
			spmiwire.Text(r.State.String()), spmiwire.Uint(uint64(max(r.Since.Unix(), 0))), spmiwire.Text(val),
			spmiwire.Int(int64(r.Severity)), spmiwire.Int(int64(r.Count))}); err != nil {
			return err
		}
	}
	return nil
}

// FormatValue is a value in decimal with at most 4 decimal places.
func FormatValue(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// Row is one alarm instance, for the Alarm table.
type Row struct {
	Alarm, Instance string
	State           State
	Since           time.Time
	Value           float64
	OK              bool
	Severity, Count int
}

// Rows are the alarm instances that have a row: in the order of the
// alarms, then of the instances' names; as of the last evaluation.
func (e *Engine) Rows() []Row {
	var out []Row
	for _, a := range e.pub.Load().alarms {
		out = append(out, a.rows...)
	}
	return out
}

// AgentStats adds Agent/expr under agent: the totals and one instance
// per expression with its last evaluation. The subtree is a fragment
// built once per set of definitions (spmi.Fragment), its values live:
// the refreshes requests wait for cost nothing for 2,000 expressions.
func (e *Engine) AgentStats(b *spmi.Builder, agent *spmi.Node) error {
	r := e.pub.Load()
	e.fragMu.Lock()
	defer e.fragMu.Unlock()
	if e.frag == nil || e.fragDefs != r.defs || !e.frag.Fits(b, agent) {
		f, err := b.Fragment(agent, func(fb *spmi.Builder, at *spmi.Node) error { return e.buildExpr(fb, at, r) })
		if err != nil {
			return err
		}
		e.frag, e.fragDefs = f, r.defs
	}
	return b.Graft(agent, e.frag)
}

// buildExpr adds Agent/expr for the definitions of r under agent.
func (e *Engine) buildExpr(b *spmi.Builder, agent *spmi.Node, r *results) error {
	cx, err := b.Context(agent, &ExprCx)
	if err != nil {
		return err
	}
	if err := b.LiveBlock(cx, exprTotalsBlock, totalsSource{e}, 0); err != nil {
		return err
	}
	// One context per expression, its statistics a block read when asked
	// for: each evaluation's figures served without a node.
	src := resultsSource{e, r, false}
	k := uint32(0)
	add := func(name string, x *expr.Expr, trapNo int) error {
		descr := x.String()
		if trapNo > 0 { // as a hotset's: subagent mib names alarmTrapN from it
			descr = fmt.Sprintf("trap %d: %s", trapNo, descr)
		}
		in, err := b.Instance(cx, &exprRow, name, descr, 0)
		if err == nil {
			err = b.LiveBlock(in, exprBlock, src, k*uint32(len(exprStats)))
		}
		k++
		return err
	}
	for _, d := range r.derived {
		if err := add(d.def.Name, d.def.X, 0); err != nil {
			return err
		}
	}
	for _, a := range r.alarms {
		if err := add(a.def.Name, a.def.X, a.def.TrapNo); err != nil {
			return err
		}
	}
	return nil
}

// totalsSource reads Agent/expr's totals from the last evaluation.
type totalsSource struct{ e *Engine }

func (s totalsSource) Pin() spmi.LivePin {
	t := totalsPin{r: s.e.pub.Load()}
	if s.e.Commands != nil {
		t.cmds = s.e.Commands()
	}
	return t
}

type totalsPin struct {
	r    *results
	cmds [4]uint64
}

func (p totalsPin) Value(i uint32) spmiwire.Value {
	switch {
	case i == 0:
		return spmiwire.Uint(p.r.evals)
	case i == 1:
		return spmiwire.Float(float64(p.r.took) / float64(time.Millisecond))
	case i < 6:
		return spmiwire.Uint(p.cmds[i-2])
	}
	return spmiwire.NoValue
}

// exprTotalsBlock is exprTotals as Agent/expr's own block.
var exprTotalsBlock = mustBlock(exprTotals)

// exprBlock is exprStats as the block of each expression's context.
var exprBlock = mustBlock(exprStats)

func mustBlock(ds []spmiwire.StatDesc) *spmi.Block {
	blk, err := spmi.NewBlock(ds)
	if err != nil {
		panic(err)
	}
	return blk
}

// Value is Agent/expr's field i: statistic i mod len(exprStats) of
// expression i / len(exprStats), the derived statistics first.
func (r *results) Value(i uint32) spmiwire.Value {
	k, j := int(i)/len(exprStats), int(i)%len(exprStats)
	kind, x, s := "derived", (*expr.Expr)(nil), Stat{}
	switch {
	case k < len(r.derived):
		x, s = r.derived[k].def.X, r.derived[k].Stat
	case k-len(r.derived) < len(r.alarms):
		a := &r.alarms[k-len(r.derived)]
		kind, x, s = "alarm", a.def.X, a.Stat
	default:
		return spmiwire.NoValue
	}
	switch j {
	case 0:
		return spmiwire.Text(kind)
	case 1:
		return spmiwire.Float(float64(s.Took) / float64(time.Microsecond))
	case 2:
		return spmiwire.Int(int64(s.Cost))
	case 3:
		return spmiwire.Int(int64(x.Bound()))
	}
	if s.Err != nil {
		return spmiwire.Text(s.Err.Error())
	}
	return spmiwire.Text("")
}

// Errors are the expressions whose last evaluation failed, by name.
func (e *Engine) Errors() map[string]error {
	r := e.pub.Load()
	out := map[string]error{}
	for _, d := range r.derived {
		if d.Err != nil {
			out[d.def.Name] = d.Err
		}
	}
	for _, a := range r.alarms {
		if a.Err != nil {
			out[a.def.Name] = a.Err
		}
	}
	return out
}
