package mib

import (
	"fmt"
	"strings"

	"github.com/perfagent/subagent/asn1tree"
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
}

// fixedNames are the module's own descriptors, known before the tree's.
func (m *model) fixedNames() []string {
	out := []string{
		m.prefix + "MIB", m.prefix + "Notifications", m.prefix + "Conformance",
		m.prefix + "Compliances", m.prefix + "Groups", m.prefix + "Compliance",
		m.prefix + "HotsetGroups",
		"hotsetObjects", "hotsetObjectsGroup", "hotsetNotificationsGroup",
	}
	for _, o := range NotifyObjects() {
		out = append(out, o.Name)
	}
	for _, n := range m.notifications() {
		out = append(out, n.Name)
	}
	// Every convention name, used or not: they differ from descriptors
	// only in case, which SMI tools warn about.
	for _, b := range []string{"Gauge32", "Integer32"} {
		for s := uint8(1); s <= 9; s++ {
			out = append(out, scaledTC{Base: b, Scale: s}.name())
		}
	}
	out = append(out, smiReserved...)
	// What the module does import, should smiReserved ever miss a name.
	for _, f := range m.importList() {
		out = append(out, f.names...)
	}
	return out
}

// name gives every declared node its descriptor. The plain form comes
// from the path; a plain form that is too long, claimed by more than one
// node or taken by the module itself gets the relative-id suffix on every
// claimant, so which node keeps a name never depends on order. Comparison
// ignores case. A path that cannot become a valid descriptor is an error.
func (m *model) name() error {
	used := map[string]bool{}
	for _, s := range m.fixedNames() {
		used[strings.ToLower(s)] = true
	}
	hot := m.byRel[asn1tree.OID{HotsetArc}.String()]
	m.fixedHot = hot == nil || !hot.declared
	if m.fixedHot {
		used["hotset"] = true
	}
	var decl []*node
	plain := map[*node]string{}
	claims := map[string]int{}
	for _, n := range m.nodes {
		if n.declared {
			p := plainDescriptor(n.comps, n.it.Rel)
			decl = append(decl, n)
			plain[n] = p
			claims[strings.ToLower(p)]++
		}
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
	if err := m.nameClasses(used); err != nil {
		return err
	}
	var err error
	if m.tableIDs, err = m.tableNodes(used); err != nil {
		return err
	}
	return m.nameGroups(used)
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
// number, so groups keep their OIDs as contexts come and go.
func (m *model) nameGroups(used map[string]bool) error {
	for _, n := range m.nodes {
		if !n.declared || n.parent != nil {
			continue
		}
		var members []string
		walkDeclared(n, func(c *node) {
			if c.it.IsStat() {
				members = append(members, c.name)
			}
		})
		for _, c := range m.classes {
			if c.picked && c.key[0] == n.it.Rel[0] {
				members = append(members, c.members()...)
			}
		}
		if len(members) == 0 {
			continue
		}
		arc := n.it.Rel[0]
		name := n.name + "Group"
		if len(name) > MaxDescriptor || used[strings.ToLower(name)] {
			var err error
			if name, err = unused(used, n.name+"Group", asn1tree.OID{ConformanceArc, 2, arc}); err != nil {
				return badPath(n.it.Path, fmt.Errorf("its group: %w", err))
			}
		}
		used[strings.ToLower(name)] = true
		m.groups = append(m.groups, group{name: name, arc: arc, top: n, members: members})
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
