package mib

import (
	"fmt"
	"strings"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/mib/schema"
	"github.com/perfagent/subagent/spmi"
)

// smiReserved are names a descriptor must not take, ignoring case: what
// the module imports or could import, the base types libsmi knows (smilint
// warns about case-only differences), ASN.1 value names and the lowercase
// words of the SMI macros. Fixed, so that a path's descriptor does not
// depend on what else the tree imports.
var smiReserved = []string{
	"iso", "ccitt", "org", "dod", "internet", "directory", "mgmt", "experimental",
	"private", "enterprises", "security", "snmpV2", "snmpDomains", "snmpProxys",
	"snmpModules", "zeroDotZero", "current", "deprecated", "obsolete", "mandatory",
	"optional",
	"Integer32", "Gauge32", "Counter32", "Counter64", "Unsigned32", "TimeTicks",
	"IpAddress", "Opaque", "ObjectName", "NotificationName", "ObjectSyntax",
	"SimpleSyntax", "ApplicationSyntax", "DisplayString", "CounterBasedGauge64",
	"Bits", "OctetString", "ObjectIdentifier", "Integer64", "Unsigned64", "Float32",
	"Float64", "Float128", "Pointer", "Enumeration",
	"RowStatus", "StorageType", "TruthValue", // the writable tables' (writable.go)
}

// fixedNames are the module's own descriptors, known before the tree's.
func (m *model) fixedNames() []string {
	out := []string{
		m.prefix + "MIB", m.prefix + "Notifications", m.prefix + "Conformance",
		m.prefix + "Compliances", m.prefix + "Groups", m.prefix + "Compliance",
		m.prefix + "HotsetGroups", m.prefix + "FrontEndGroups",
		"hotsetObjects", "hotsetObjectsGroup", "hotsetNotificationsGroup", "sloObjects",
	}
	for _, o := range schema.NotifyObjects() {
		out = append(out, o.Name)
	}
	for _, d := range Deployments {
		out = append(out, m.prefix+d.Name+"Compliance")
	}
	out = append(out, m.writableNames()...)
	out = append(out, m.outcomeNames()...)
	for _, n := range m.notifications() {
		out = append(out, n.Name)
	}
	// Every convention name, used or not: they differ from descriptors
	// only in case, which SMI tools warn about.
	for _, b := range []string{"Gauge32", "Integer32"} {
		for s := uint8(1); s <= 9; s++ {
			out = append(out, schema.ScaledTC{Base: b, Scale: s}.Name())
		}
	}
	out = append(out, smiReserved...)
	// What the module does import, should smiReserved ever miss a name.
	for _, f := range m.importList() {
		out = append(out, f.names...)
	}
	return out
}

// name gives every declared node its descriptor, then the tables theirs.
// Names are chosen by rules, in this order, comparing without case:
//
//  1. The plain form comes from the path (plainDescriptor); a table's
//     objects from its stem (plan).
//  2. A statistic of a context whose rows a table holds, whose plain form
//     is also that of a column of the table, says Total after the
//     context (PagSp/size, the sum over all swap devices, is
//     pagSpTotalSize; pagSpSize is the column), as the aggregate
//     CPU/total/idle is cpuTotalIdle.
//  3. A table's object whose plain form is taken by the module (the
//     notification objects hotsetName, hotsetThreshold, ...) or by a
//     scalar says Entry after the stem: hotsetEntryThreshold.
//
// Every name these give is the same whatever the order of the items.
// What no rule settles — a plain form too long, still claimed by more
// than one node or taken, which trees of DDS suppliers can make — gets
// the relative-id suffix as a last resort (memRealFreeR2x1x2), on every
// claimant, so which node keeps a name never depends on order; the
// shipped module has none (TestNoSuffixInTheShippedModule). A path that
// cannot become a valid descriptor is an error.
func (m *model) name() error {
	used := map[string]bool{}
	for _, s := range m.fixedNames() {
		used[strings.ToLower(s)] = true
	}
	hot := m.byRel[asn1tree.OID{spmi.ASNHotset}.String()]
	m.fixedHot = hot == nil || !hot.declared
	if m.fixedHot {
		used["hotset"] = true
	}
	slo := m.byRel[asn1tree.OID{spmi.ASNSLO}.String()]
	m.fixedSLO = slo == nil || !slo.declared
	if m.fixedSLO {
		used["slo"] = true
	}
	m.plan()
	var decl []*node
	plain := map[*node]string{}
	for _, n := range m.nodes {
		if n.declared {
			decl = append(decl, n)
			plain[n] = plainDescriptor(n.comps, n.it.Rel)
		}
	}
	m.totals(plain)
	claims := map[string]int{}
	for _, n := range decl {
		claims[strings.ToLower(plain[n])]++
	}
	var clash []*node
	for _, n := range decl {
		p := plain[n]
		if len(p) > MaxDescriptor || claims[strings.ToLower(p)] > 1 || used[strings.ToLower(p)] {
			clash = append(clash, n)
			continue
		}
		n.name = p
	}
	for _, n := range decl {
		if n.name != "" {
			used[strings.ToLower(n.name)] = true
		}
	}
	for _, n := range clash {
		var err error
		if n.name, err = unused(used, plain[n], n.it.Rel); err != nil {
			return badPath(n.it.Path, err)
		}
	}
	m.hotset = "hotset"
	if !m.fixedHot {
		m.hotset = hot.name
	}
	m.slo = "slo"
	if !m.fixedSLO {
		m.slo = slo.name
	}
	if err := m.nameClasses(used); err != nil {
		return err
	}
	var err error
	if m.tableIDs, err = m.tableNodes(used); err != nil {
		return err
	}
	return m.nameGroups(used)
}

// totals applies rule 2 of name: a context's statistic that would take
// the plain form of a column of the table of its rows says Total.
func (m *model) totals(plain map[*node]string) {
	cols := map[*node]map[string]bool{} // rows' parent -> its table's plain forms
	for _, c := range m.classes {
		if !c.picked {
			continue
		}
		for _, r := range c.rows {
			if cols[r.parent] == nil {
				cols[r.parent] = map[string]bool{}
			}
			for _, s := range append([]string{c.plain.name, c.plain.descr}, c.plain.cols...) {
				if s != "" {
					cols[r.parent][strings.ToLower(s)] = true
				}
			}
		}
	}
	for n, p := range plain {
		if n.it.IsStat() && cols[n.parent][strings.ToLower(p)] {
			plain[n] = plainDescriptor(n.parent.comps, n.parent.it.Rel) + "Total" + statWord(n)
		}
	}
}

func badPath(path string, err error) error {
	return fmt.Errorf("mib: path %q cannot become a valid descriptor: %w", path, err)
}

// unused is the first suffixed form of plain that is free; it marks it used.
func unused(used map[string]bool, plain string, rel asn1tree.OID) (string, error) {
	for extra := 0; ; extra++ {
		c, err := suffixed(plain, rel, extra)
		if err != nil {
			return "", err
		}
		if !used[strings.ToLower(c)] {
			used[strings.ToLower(c)] = true
			return c, nil
		}
	}
}

// nameGroups makes one OBJECT-GROUP per top-level context that declares
// statistics, named after it ("cpuGroup") and numbered by its ASN.1
// number, so groups keep their OIDs as contexts come and go. The context
// of a front end (Deployments: Agent/snmp/) gets a group of its own
// ("agentSnmpGroup"), out of its top-level context's, so that each
// deployment's compliance lists only what that deployment serves.
func (m *model) nameGroups(used map[string]bool) error {
	front := map[*node]int{} // front end's context -> index in Deployments
	for i, d := range Deployments {
		for _, n := range m.nodes {
			if n.declared && n.it.Path == d.Context {
				front[n] = i
			}
		}
	}
	add := func(n *node, members []string, dep int, arc uint32, oid asn1tree.OID) error {
		if len(members) == 0 {
			return nil
		}
		name := n.name + "Group"
		if len(name) > MaxDescriptor || used[strings.ToLower(name)] {
			var err error
			if name, err = unused(used, n.name+"Group", oid); err != nil {
				return badPath(n.it.Path, fmt.Errorf("its group: %w", err))
			}
		}
		used[strings.ToLower(name)] = true
		m.groups = append(m.groups, group{name: name, arc: arc, top: n, members: members, deployment: dep})
		return nil
	}
	var fronts []*node
	for _, n := range m.nodes {
		if !n.declared || n.parent != nil {
			continue
		}
		var members []string
		var walk func(c *node)
		walk = func(c *node) {
			if _, ok := front[c]; ok {
				fronts = append(fronts, c)
				return
			}
			if c.it.IsStat() {
				members = append(members, c.name)
			}
			for _, k := range c.children {
				if k.declared {
					walk(k)
				}
			}
		}
		walk(n)
		for _, c := range m.classes {
			if c.picked && c.key[0] == n.it.Rel[0] {
				members = append(members, c.members()...)
			}
		}
		if err := add(n, members, -1, n.it.Rel[0], asn1tree.OID{spmi.ASNConformance, groupsArc, n.it.Rel[0]}); err != nil {
			return err
		}
	}
	for _, n := range fronts {
		var members []string
		walkDeclared(n, func(c *node) {
			if c.it.IsStat() {
				members = append(members, c.name)
			}
		})
		d := Deployments[front[n]]
		if err := add(n, members, front[n], d.GroupArc, asn1tree.OID{spmi.ASNConformance, frontEndGroupsArc, d.GroupArc}); err != nil {
			return err
		}
	}
	return nil
}

// checkNames validates what naming gave, as the last word before writing:
// every descriptor of the tree and every group name must be a valid
// descriptor, unique ignoring case among themselves and the module's own
// names, imports and reserved words.
func (m *model) checkNames() error {
	owner := map[string]string{} // lowercased name -> path ("" = the module's)
	for _, s := range m.fixedNames() {
		owner[strings.ToLower(s)] = ""
	}
	if m.fixedHot {
		owner["hotset"] = ""
	}
	if m.fixedSLO {
		owner["slo"] = ""
	}
	claim := func(path, name string) error {
		if err := validDescriptor(name); err != nil {
			return badPath(path, err)
		}
		o, taken := owner[strings.ToLower(name)]
		switch {
		case taken && o == "":
			return badPath(path, fmt.Errorf("descriptor %s is a name the module reserves", name))
		case taken:
			return badPath(path, fmt.Errorf("descriptor %s is also that of %q", name, o))
		}
		owner[strings.ToLower(name)] = path
		return nil
	}
	for _, n := range m.nodes {
		if n.declared {
			if err := claim(n.it.Path, n.name); err != nil {
				return err
			}
		}
	}
	for _, g := range m.groups {
		if err := claim(g.top.it.Path, g.name); err != nil {
			return err
		}
	}
	for _, c := range m.classes {
		if !c.picked {
			continue
		}
		path := strings.Join(c.pattern, "/")
		for _, s := range append([]string{c.table, c.entry, c.index}, c.members()...) {
			if err := claim(path, s); err != nil {
				return err
			}
		}
	}
	for oid, s := range m.tableIDs {
		if err := claim("table arc "+oid, s); err != nil {
			return err
		}
	}
	return nil
}

// walkDeclared visits the declared nodes of n's subtree in OID order.
func walkDeclared(n *node, fn func(*node)) {
	if !n.declared {
		return
	}
	fn(n)
	for _, c := range n.children {
		walkDeclared(c, fn)
	}
}
