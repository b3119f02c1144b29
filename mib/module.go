package mib

import (
	"fmt"
	"slices"
	"strings"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/mib/schema"
	"github.com/perfagent/subagent/spmi"
)

// DefaultModule is the module name when Options.Module is empty.
const DefaultModule = "SUBAGENT-MIB"

// Options select what a module describes.
type Options struct {
	Module  string       // module name ("" = DefaultModule)
	Base    asn1tree.OID // OID of the tree (nil = the tree's own base)
	Include []string     // paths of the subtrees to describe (none = all)
	// Instances also declares each instance's statistics as scalars under
	// its own name (cpuCpu0Idle), as this host has them; without it the
	// module names instances only through the tables, the same on every host.
	Instances bool
}

// Object is one definition of a generated module.
type Object struct {
	Name  string       // descriptor
	OID   asn1tree.OID // full OID
	Macro string       // OBJECT-TYPE, OBJECT-IDENTITY, NOTIFICATION-TYPE, ...
	Path  string       // the tree path it describes ("" for the module's own nodes)
	// Syntax is the SYNTAX of an OBJECT-TYPE as written.
	Syntax string
}

// Module is a generated module.
type Module struct {
	Name    string
	Base    asn1tree.OID
	Text    []byte
	Objects []Object // every definition in OID order, TEXTUAL-CONVENTIONs excepted
	Tables  []Table  // the table view's tables, in OID order
	// Partial: Options.Include picked subtrees, so the tree serves tables
	// the module does not name.
	Partial bool
}

// Table describes one table of a module, for tools that build on it
// (the snmp_exporter generator configuration).
type Table struct {
	Name    string       // cpuTable
	OID     asn1tree.OID // of the table
	Pattern string       // the rows' paths: CPU/*/
	Index   []string     // the INDEX objects, outermost first
	// Label is the column that names a row for people: the name column
	// (cpuName), or the statistic its description repeats (fsMount, not
	// the shortened fsName); "" where the name is the index (a PID).
	Label   string
	Descr   string   // the column with its description (cpuDescr), "" if none
	Columns []Column // the statistics
}

// Column is one statistic of a table.
type Column struct {
	Name  string
	Stat  *spmiwire.StatDesc
	Kind  asn1tree.Kind // the SNMP type it is served as
	Scale uint8         // decimal places of a scaled value
}

// node is a tree item on its way into the module.
type node struct {
	it       *Item
	parent   *node
	children []*node
	comps    []string // path components
	template bool     // an instantiable context (its instances are summarized in its description)
	declared bool     // gets a definition
	picked   bool     // chosen by Include, with its subtree
	name     string
}

func (n *node) cont() bool { return n.it.Inst == ddswire.SiContInst && !n.it.Named }

// model is everything the writer needs.
type model struct {
	opts     Options
	prefix   string
	base     asn1tree.OID
	anchor   string       // SNMPv2-SMI name the base hangs under
	anchorTo asn1tree.OID // arcs from the anchor to the base
	nodes    []*node      // in OID order
	byRel    map[string]*node
	hotset   string // descriptor of base.14, from the tree or fixed
	fixedHot bool   // base.14 is the module's own definition
	slo      string // descriptor of base.19 (SLO), from the tree or fixed
	fixedSLO bool   // base.19 is the module's own definition
	groups   []group
	tcs      []schema.ScaledTC
	included []string // paths picked by Include, sorted
	classes  []*class // the tables (spmi.TablesArc), in OID order
	tableIDs map[string]string
}

type group struct {
	name       string
	arc        uint32 // under prefixGroups: the top-level ASN; under prefixFrontEndGroups: Deployment.GroupArc
	top        *node
	members    []string
	deployment int // index in Deployments of a front end's group, -1 for a context's
}

// Generate writes the module describing t. It fails, writing nothing, when
// a path cannot become a valid descriptor (see checkNames).
func Generate(t Tree, opts Options) (*Module, error) {
	m, err := build(t, opts)
	if err != nil {
		return nil, err
	}
	return m.write(), nil
}

func build(t Tree, opts Options) (*model, error) {
	if opts.Module == "" {
		opts.Module = DefaultModule
	}
	if err := ValidModuleName(opts.Module); err != nil {
		return nil, err
	}
	m := &model{opts: opts, prefix: modulePrefix(opts.Module), base: opts.Base, byRel: map[string]*node{}}
	for _, s := range m.fixedNames() {
		if strings.HasPrefix(s, m.prefix) && validDescriptor(s) != nil {
			return nil, fmt.Errorf("mib: module name %q is too long for its own descriptors such as %s", opts.Module, s)
		}
	}
	if m.base == nil {
		m.base = t.Base
	}
	if err := m.anchorBase(); err != nil {
		return nil, err
	}
	if err := m.index(t); err != nil {
		return nil, err
	}
	if err := m.pick(opts.Include); err != nil {
		return nil, err
	}
	m.classify()
	m.findClasses()
	m.collectTCs() // before naming: the imports depend on the conventions
	if err := m.name(); err != nil {
		return nil, err
	}
	if err := m.checkNames(); err != nil {
		return nil, err
	}
	return m, nil
}

// smiRoots are the SNMPv2-SMI names a base can hang under, longest first.
var smiRoots = []struct {
	name string
	oid  asn1tree.OID
}{
	{"enterprises", asn1tree.OID{1, 3, 6, 1, 4, 1}},
	{"mib-2", asn1tree.OID{1, 3, 6, 1, 2, 1}},
	{"private", asn1tree.OID{1, 3, 6, 1, 4}},
	{"experimental", asn1tree.OID{1, 3, 6, 1, 3}},
	{"mgmt", asn1tree.OID{1, 3, 6, 1, 2}},
	{"internet", asn1tree.OID{1, 3, 6, 1}},
}

func (m *model) anchorBase() error {
	if len(m.base) == 0 {
		return fmt.Errorf("mib: no base OID")
	}
	for _, r := range smiRoots {
		if len(m.base) > len(r.oid) && m.base.HasPrefix(r.oid) {
			m.anchor, m.anchorTo = r.name, m.base[len(r.oid):]
			return nil
		}
	}
	return fmt.Errorf("mib: base OID %s is not below internet (1.3.6.1)", m.base)
}

// index checks the items and links them into a tree in OID order.
func (m *model) index(t Tree) error {
	items := make([]*Item, len(t.Items))
	for i := range t.Items {
		items[i] = &t.Items[i]
	}
	slices.SortFunc(items, func(a, b *Item) int { return asn1tree.Compare(a.Rel, b.Rel) })
	longest := 0
	for _, it := range items {
		key := it.Rel.String()
		if len(it.Rel) == 0 {
			return fmt.Errorf("mib: %q has an empty relative id", it.Path)
		}
		if o := m.byRel[key]; o != nil {
			return fmt.Errorf("mib: %q and %q share the relative id %s", o.it.Path, it.Path, key)
		}
		comps := strings.Split(strings.TrimSuffix(it.Path, "/"), "/")
		if len(comps) != len(it.Rel) {
			return fmt.Errorf("mib: path %q does not match its relative id %s", it.Path, key)
		}
		n := &node{it: it, comps: comps}
		if len(it.Rel) == 1 {
			if it.IsStat() {
				return fmt.Errorf("mib: statistic %q is not in a context", it.Path)
			}
			if a := it.Rel[0]; a == spmi.ASNNotifications || a == spmi.ASNConformance || a == spmi.ASNWritable || a == spmi.ASNNotifLogExt || a >= spmi.TablesArc && a <= spmi.TablesArc+spmi.MaxTableDepth {
				return fmt.Errorf("mib: top-level context %q uses arc %d, which the module reserves", it.Path, a)
			}
		} else {
			if len(it.Rel) == 2 && it.Rel[0] == spmi.ASNHotset && it.Rel[1] == schema.HotsetObjectsArc {
				return fmt.Errorf("mib: %q uses the arc %s, which the module reserves for the hotset notification objects", it.Path, key)
			}
			if len(it.Rel) == 2 && it.Rel[0] == spmi.ASNSLO && it.Rel[1] == schema.SLOObjectsArc {
				return fmt.Errorf("mib: %q uses the arc %s, which the module reserves for the SLO notification objects", it.Path, key)
			}
			p := m.byRel[it.Rel[:len(it.Rel)-1].String()]
			if p == nil || p.it.IsStat() {
				return fmt.Errorf("mib: %q has no parent context in the tree", it.Path)
			}
			n.parent = p
			p.children = append(p.children, n)
		}
		m.byRel[key] = n
		m.nodes = append(m.nodes, n)
		longest = max(longest, len(it.Rel))
	}
	if len(m.base)+longest+1 > asn1tree.MaxLen {
		return fmt.Errorf("mib: base %s plus the deepest relative id exceeds %d sub-identifiers", m.base, asn1tree.MaxLen)
	}
	return nil
}

// pick marks the included subtrees; every node when there is no Include.
func (m *model) pick(include []string) error {
	if len(include) == 0 {
		for _, n := range m.nodes {
			n.picked = true
		}
		return nil
	}
	byPath := make(map[string]*node, len(m.nodes))
	for _, n := range m.nodes {
		byPath[strings.TrimSuffix(n.it.Path, "/")] = n
	}
	for _, p := range include {
		n := byPath[spmiwire.CleanPath(p)]
		if n == nil {
			return fmt.Errorf("mib: include %q: no context or statistic with that path", p)
		}
		markAll(n)
		if !slices.Contains(m.included, n.it.Path) {
			m.included = append(m.included, n.it.Path)
		}
	}
	slices.Sort(m.included)
	return nil
}

func markAll(n *node) {
	n.picked = true
	for _, c := range n.children {
		markAll(c)
	}
}

// classify decides which nodes get definitions: picked nodes and their
// ancestors, except what lies inside instances of a continuously
// instantiable context (described once by that context instead).
func (m *model) classify() {
	for _, n := range m.nodes {
		n.template = !n.it.IsStat() && n.it.Inst != ddswire.SiNoInst
	}
	for _, n := range m.nodes {
		if !n.picked || !m.opts.Instances && inRow(n) {
			continue
		}
		start := n
		if t := contTemplate(n); t != nil {
			start = t
		}
		for a := start; a != nil && !a.declared; a = a.parent {
			a.declared = true
		}
	}
}

// contTemplate is the outermost continuously instantiable context one of
// whose instances is n or holds n; nil when there is none.
func contTemplate(n *node) *node {
	var t *node
	for c := n; c.parent != nil; c = c.parent {
		if c.it.Instance && c.parent.template && c.parent.cont() {
			t = c.parent
		}
	}
	return t
}

// collectTCs lists the scaled conventions the declared statistics use.
func (m *model) collectTCs() {
	seen := map[schema.ScaledTC]bool{}
	for _, s := range m.declaredStats() {
		if tc := schema.SyntaxOf(s).TC; tc != nil && !seen[*tc] {
			seen[*tc] = true
			m.tcs = append(m.tcs, *tc)
		}
	}
	slices.SortFunc(m.tcs, func(a, b schema.ScaledTC) int {
		if c := strings.Compare(a.Base, b.Base); c != 0 {
			return c
		}
		return int(a.Scale) - int(b.Scale)
	})
}

// declaredStats are the statistics the module declares, as scalars or as
// table columns.
func (m *model) declaredStats() []*spmiwire.StatDesc {
	var out []*spmiwire.StatDesc
	for _, n := range m.nodes {
		if n.declared && n.it.IsStat() {
			out = append(out, n.it.Stat)
		}
	}
	for _, c := range m.classes {
		if c.picked {
			for _, s := range c.cols {
				out = append(out, s.it.Stat)
			}
		}
	}
	return out
}
