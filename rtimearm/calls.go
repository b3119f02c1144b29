package rtimearm

import (
	"fmt"
	"hash/fnv"
	"sort"

	"github.com/perfagent/subagent/client/armring"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/spmi"
)

// The call graph: one edge per (parent → child transaction) seen in the
// records of instances started with a parent's correlator. A parent on
// this host is its transaction; one elsewhere (or gone) is named by its
// correlator, as the parent statistic names it.

// MaxEdgesPerApp bounds the edges into the transactions of one
// application; the instances of further edges are counted in
// RTime/Calls/overflow.
const MaxEdgesPerApp = 64

type edgeKey struct {
	parent string // application/transaction, or the correlator's fields
	child  *tran
}

type edge struct {
	key      edgeKey
	parentT  *tran // nil: not on this host
	count    uint64
	failures uint64  // aborted or failed
	sum      float64 // of the child instances' response times, ns
}

// edges is the call graph (under the registry's lock).
type edges struct {
	m        map[edgeKey]*edge
	perApp   map[*app]int
	overflow uint64
}

// addEdge counts a child instance of t whose record names its parent.
func (r *Registry) addEdge(rec *armring.Record, t *tran) {
	pt, name := r.parentOf(rec)
	k := edgeKey{parent: name, child: t}
	e := r.calls.m[k]
	if e == nil {
		if r.calls.perApp[t.app] >= MaxEdgesPerApp {
			r.calls.overflow++
			return
		}
		if r.calls.m == nil {
			r.calls.m, r.calls.perApp = map[edgeKey]*edge{}, map[*app]int{}
		}
		e = &edge{key: k, parentT: pt}
		r.calls.m[k] = e
		r.calls.perApp[t.app]++
		r.shaped()
	}
	e.count++
	if rec.Status != armring.Good {
		e.failures++
	}
	e.sum += float64(rec.Dur)
}

// dropEdges forgets the edges into or out of a dropped application.
func (r *Registry) dropEdges(x *app) {
	for k, e := range r.calls.m {
		if k.child.app == x || (e.parentT != nil && e.parentT.app == x) {
			delete(r.calls.m, k)
			r.calls.perApp[k.child.app]--
		}
	}
	delete(r.calls.perApp, x)
}

var (
	callsCx  = spmi.CxDesc{Name: "Calls", Descr: "ARM call graph: parent to child transaction edges", ASN: spmi.ASNRTimeCalls, Inst: ddswire.SiContInst}
	edgeTpl  = spmi.CxDesc{Descr: "Call graph edge"}
	callStat = []spmiwire.StatDesc{
		{Name: "edges", Descr: "Edges in the call graph", ASN: 1, Max: 100, Val: ddswire.SiQuantity},
		{Name: "overflow", Descr: "Child instances of edges beyond the limit per application", ASN: 2, Max: 100, Val: ddswire.SiCounter},
	}
	edgeStats = []spmiwire.StatDesc{
		{Name: "parent", Descr: "Parent: application/transaction, or its correlator's fields", ASN: 1, Data: spmiwire.SiText},
		{Name: "child", Descr: "Child: application/transaction", ASN: 2, Data: spmiwire.SiText},
		{Name: "count", Descr: "Child instances started with the parent's correlator", ASN: 3, Max: 100, Val: ddswire.SiCounter},
		{Name: "failures", Descr: "Child instances aborted or failed", ASN: 4, Max: 100, Val: ddswire.SiCounter},
		{Name: "resptotal", Descr: "Total response time of the child instances", ASN: 5, Max: 1000, Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 3, Wide: true, Units: "milliseconds"},
		{Name: "respmean", Descr: "Mean response time of the child instances", ASN: 6, Max: 1000, Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 3, Units: "milliseconds"},
		{Name: "share", Descr: "Child response time, of the parent transaction's total", ASN: 7, Max: 100, Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 3, Units: "percent"},
	}
)

// edgeName is an edge's instance name: a hash of its ends, so that it
// keeps its number across restarts (and fits the 31 bytes of a name).
func edgeName(k edgeKey) string {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%s/%s", k.parent, k.child.app.key, k.child.key)
	return fmt.Sprintf("%016x", h.Sum64())
}

// collectCalls adds RTime/Calls. Called with mu held.
func (r *Registry) collectCalls(b *spmi.Builder, rt *spmi.Node) error {
	cx, err := b.Context(rt, &callsCx)
	if err != nil {
		return err
	}
	if err := b.Stats(cx, callStat, []spmiwire.Value{spmiwire.Uint(uint64(len(r.calls.m))), spmiwire.Uint(r.calls.overflow)}); err != nil {
		return err
	}
	es := make([]*edge, 0, len(r.calls.m))
	for _, e := range r.calls.m {
		es = append(es, e)
	}
	sort.Slice(es, func(i, j int) bool { return edgeName(es[i].key) < edgeName(es[j].key) })
	for _, e := range es {
		child := e.key.child.app.key + "/" + e.key.child.key
		n, err := b.Instance(cx, &edgeTpl, edgeName(e.key), e.key.parent+" > "+child, 0)
		if err != nil {
			b.Fail(Root+" call graph", err)
			continue
		}
		share := spmiwire.Unmeasured("the parent is not on this host, or has no successful instance")
		if e.parentT != nil && e.parentT.sumNs > 0 {
			share = spmiwire.Float(100 * e.sum / e.parentT.sumNs)
		}
		if err := b.Stats(n, edgeStats, []spmiwire.Value{spmiwire.Text(e.key.parent), spmiwire.Text(child),
			spmiwire.Uint(e.count), spmiwire.Uint(e.failures), spmiwire.Float(e.sum / 1e6),
			spmiwire.Float(e.sum / 1e6 / float64(e.count)), share}); err != nil {
			return err
		}
	}
	return nil
}
