package mib

import (
	"fmt"
	"slices"
	"strings"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/mib/schema"
)

// contextDescription describes a context or an instance; an instantiable
// context also describes its instances' statistics, so that an instance
// the module does not declare can still be decoded.
func (m *model) contextDescription(n *node) string {
	it := n.it
	descr := sentence(it.Descr)
	if descr == "" {
		descr = n.comps[len(n.comps)-1]
	}
	var b strings.Builder
	if it.Instance {
		fmt.Fprintf(&b, "%s (instance %s of %s).", descr, n.comps[len(n.comps)-1], n.parent.it.Path)
	} else {
		fmt.Fprintf(&b, "%s (context %s).", descr, it.Path)
	}
	if !n.template {
		return b.String()
	}
	if !m.opts.Instances {
		fmt.Fprintf(&b, "\nIts instances are the rows of a table under %sTables (one row per instance, "+
			"indexed by the instance's number, with its name and statistics as columns). Each "+
			"statistic is also served as a scalar here: statistic S of instance I is %s.I.S.0.", m.prefix, n.name)
		return b.String()
	}
	pattern := n.name + ".<instance>.<statistic>.0"
	if n.cont() {
		fmt.Fprintf(&b, "\nIts instances come and go continuously, so they are not declared: "+
			"statistic S of instance I has the OID %s.I.S.0 and is shown under this name "+
			"with the rest in numbers.", n.name)
	} else if it.Named {
		fmt.Fprintf(&b, "\nIts instances come and go, each keeping its name and number. Those "+
			"present when this module was written are declared below it with their statistics; "+
			"one added later is shown as %s.", pattern)
	} else {
		fmt.Fprintf(&b, "\nIts instances change with the configuration. Those present when this "+
			"module was written are declared below it with their statistics; one added later "+
			"is shown as %s.", pattern)
	}
	stats := instanceStats(n)
	if len(stats) == 0 {
		b.WriteString("\nNo instance existed when this module was written, so the statistics of an instance are not listed.")
		return b.String()
	}
	b.WriteString("\nThe statistics of each instance, by their number below the instance:")
	for _, s := range stats {
		fmt.Fprintf(&b, "\n%s %s: %s. %s.", s.sfx, s.path, summarySyntax(s.stat), sentence(orName(s.stat)))
	}
	return b.String()
}

type instStat struct {
	sfx  string // relative id below the instance
	rel  asn1tree.OID
	path string // path below the instance
	stat *spmiwire.StatDesc
}

// instanceStats is the union of the statistics below n's instances, keyed
// by their relative id below the instance, first seen wins.
func instanceStats(n *node) []instStat {
	depth := len(n.it.Rel) + 1
	seen := map[string]bool{}
	var out []instStat
	var visit func(c *node)
	visit = func(c *node) {
		if c.it.IsStat() {
			rel := c.it.Rel[depth:]
			if k := rel.String(); !seen[k] {
				seen[k] = true
				out = append(out, instStat{sfx: k, rel: rel, path: strings.Join(c.comps[depth:], "/"), stat: c.it.Stat})
			}
		}
		for _, g := range c.children {
			visit(g)
		}
	}
	for _, c := range n.children {
		if c.it.Instance {
			visit(c)
		}
	}
	slices.SortFunc(out, func(a, b instStat) int { return asn1tree.Compare(a.rel, b.rel) })
	return out
}

// summarySyntax names a statistic's type in prose: the SYNTAX, or for a
// scaled convention its base type and decimal places; then the units.
func summarySyntax(d *spmiwire.StatDesc) string {
	s := schema.SyntaxOf(d)
	t := s.Name
	if s.TC != nil {
		t = fmt.Sprintf("%s with %s", s.TC.Base, places(s.TC.Scale))
	}
	if s.Units != "" {
		t += ", " + s.Units
	}
	return t
}

func orName(d *spmiwire.StatDesc) string {
	if d.Descr != "" {
		return d.Descr
	}
	return d.Name
}

// moduleDescription is the MODULE-IDENTITY's DESCRIPTION.
func (m *model) moduleDescription() string {
	var b strings.Builder
	fmt.Fprintf(&b, "The SPMI data hierarchy the perfagent subagent serves under %s: "+
		"contexts are OBJECT-IDENTITY nodes, statistics are scalar OBJECT-TYPEs whose "+
		"instance is the base, the statistic's relative dotted-decimal id and .0.", m.base)
	b.WriteString("\nInstances of contexts instantiable at configuration time (processors, " +
		"disks, interfaces, file systems) are declared as they existed when the module was " +
		"written by subagent mib; the instances of continuously instantiable contexts " +
		"(processes) are described once by their context.")
	b.WriteString("\nScaled floats travel as integers: the value times 10 to the power of its " +
		"decimal places, declared through the Scaled* conventions whose DISPLAY-HINT shows " +
		"the decimal point; 64-bit ones, which RFC 2579 keeps from DISPLAY-HINTs, state the " +
		"scale in their UNITS. Booleans are TruthValue and moments DateAndTime (SNMPv2-TC); " +
		"the SPMI view holds them as 1 and 0 and as seconds since 1970.")
	if len(m.included) > 0 {
		fmt.Fprintf(&b, "\nThis module describes only %s.", strings.Join(m.included, ", "))
	}
	return b.String()
}
