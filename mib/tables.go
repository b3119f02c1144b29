package mib

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/mib/schema"
	"github.com/perfagent/subagent/spmi"
)

// class is one table of the table view (spmi.TablesArc): the rows of every
// context with the same pattern, such as CPU/* or RTime/ARM/*/*.
type class struct {
	key     asn1tree.OID // spmi's table class: the rows' parent's rel without rows' numbers
	depth   int          // rows above the rows' parent
	pattern []string     // path components of the rows' parent, "*" for rows
	rowName string       // what the rows are called where the pattern ends in "*"
	parent  *class       // the table one of whose rows holds these rows
	rows    []*node
	cols    []*node // one statistic per column, by ASN
	picked  bool

	// hasName, hasDescr: the rows have name and description columns
	// (spmi.RowColumns); label is the statistic the description repeats.
	hasName, hasDescr bool
	label             string

	plain                            names  // before collisions (plan)
	stem                             string // descriptor stem: cpu, rTimeARMTran
	table, entry, index, name, descr string // name, descr: "" without the column
	seq                              string // the entry's SEQUENCE type
	colNames                         []string
	parentsIndex                     []string // INDEX objects of the enclosing tables
	under                            string   // descriptor of the table's parent node
	underArc                         uint32
}

// names are a table's descriptors before collisions.
type names struct {
	table, entry, index, name, descr string
	cols                             []string
}

// isRow reports whether n is a row of its parent's table; an aggregate
// (CPU/total) is not.
func isRow(n *node) bool {
	return !n.it.IsStat() && n.parent != nil && n.parent.it.Rows && !n.it.Aggregate
}

// inRow reports whether n is a row or lies inside one.
func inRow(n *node) bool {
	for c := n; c != nil; c = c.parent {
		if isRow(c) {
			return true
		}
	}
	return false
}

// classKey is spmi's class of the context n (its arcs that are not rows'
// numbers), the number of rows above it, and its path pattern.
func classKey(n *node) (asn1tree.OID, int, []string) {
	var key asn1tree.OID
	var pat []string
	depth := 0
	var chain []*node
	for c := n; c != nil; c = c.parent {
		chain = append(chain, c)
	}
	slices.Reverse(chain)
	for _, c := range chain {
		if isRow(c) {
			pat = append(pat, "*")
			depth++
		} else {
			key, pat = append(key, c.it.Rel[len(c.it.Rel)-1]), append(pat, c.comps[len(c.comps)-1])
		}
	}
	return key, depth, pat
}

func (c *class) entryOID() asn1tree.OID { return spmi.TableEntry(c.depth, c.key) }

// findClasses groups the rows of the tree into tables, columns from the
// statistics of all their rows.
func (m *model) findClasses() {
	byKey := map[string]*class{}
	cols := map[*class]map[uint32]*node{}
	for _, n := range m.nodes {
		if !isRow(n) {
			continue
		}
		key, depth, pat := classKey(n.parent)
		if depth > spmi.MaxTableDepth || len(key) == 0 || key[len(key)-1] == 0 {
			continue // not served either
		}
		id := spmi.TableEntry(depth, key).String()
		c := byKey[id]
		if c == nil {
			c = &class{key: key, depth: depth, pattern: pat, rowName: n.parent.it.RowName,
				hasName: !n.parent.it.NameIsNumber, hasDescr: n.parent.it.DescrStat == "", label: n.parent.it.DescrStat}
			byKey[id] = c
			cols[c] = map[uint32]*node{}
			m.classes = append(m.classes, c)
		}
		c.rows = append(c.rows, n)
		c.picked = c.picked || n.picked || n.parent.picked
		for _, s := range n.children {
			if s.it.IsStat() && cols[c][s.it.Rel[len(s.it.Rel)-1]] == nil && s.it.Rel[len(s.it.Rel)-1] <= ^uint32(0)-spmi.ColumnOffset {
				cols[c][s.it.Rel[len(s.it.Rel)-1]] = s
			}
		}
	}
	for _, c := range m.classes {
		for _, s := range cols[c] {
			c.cols = append(c.cols, s)
		}
		slices.SortFunc(c.cols, func(a, b *node) int { return asn1tree.Compare(a.it.Rel, b.it.Rel) })
		// The enclosing table: that of the innermost row above the rows' parent.
		for p := c.rows[0].parent; p != nil; p = p.parent {
			if isRow(p) {
				k, d, _ := classKey(p.parent)
				c.parent = byKey[spmi.TableEntry(d, k).String()]
				break
			}
		}
	}
	slices.SortFunc(m.classes, func(a, b *class) int { return asn1tree.Compare(a.entryOID(), b.entryOID()) })
}

// plan works out the plain descriptors of the picked tables, before
// any node is named (the rules of naming.go need them): a stem from the
// pattern without its "*"s, then Table, Entry, Index, Name, Descr and one
// column per statistic.
func (m *model) plan() {
	for _, c := range m.classes {
		if !c.picked {
			continue
		}
		var comps []string
		for _, p := range c.pattern {
			if p != "*" {
				comps = append(comps, p)
			}
		}
		if c.pattern[len(c.pattern)-1] == "*" {
			rn := c.rowName
			if rn == "" {
				rn = "row"
			}
			comps = append(comps, rn)
		}
		c.stem = plainDescriptor(comps, c.key)
		// A statistic called name or descr (a process's command) keeps
		// its word; the instance's columns then say Inst.
		words := map[string]bool{}
		for _, s := range c.cols {
			words[statWord(s)] = true
		}
		inst := func(w string) string {
			if words[w] || words["Inst"+w] {
				return "Inst" + w
			}
			return w
		}
		p := names{table: c.stem + "Table", entry: c.stem + "Entry", index: c.stem + inst("Index")}
		if c.hasName {
			p.name = c.stem + inst("Name")
		}
		if c.hasDescr {
			p.descr = c.stem + inst("Descr")
		}
		for _, s := range c.cols {
			p.cols = append(p.cols, c.stem+statWord(s))
		}
		c.plain = p
	}
}

// statWord is the word of a statistic's own name: "PctFree" for %free,
// "N" and its ASN.1 number when the name has no usable character.
func statWord(s *node) string {
	if w := componentWord(s.comps[len(s.comps)-1]); w != "" {
		return w
	}
	return "N" + strconv.FormatUint(uint64(s.it.Rel[len(s.it.Rel)-1]), 10)
}

// nameClasses gives the tables their descriptors, after the tree's nodes
// have theirs. A table's object whose plain descriptor is taken says
// Entry after the stem (hotsetEntryThreshold: hotsetThreshold is a
// notification object); the table and entry themselves, or an Entry form
// taken too, get the suffix of their OID.
func (m *model) nameClasses(used map[string]bool) error {
	for _, c := range m.classes {
		if !c.picked {
			continue
		}
		entry := c.entryOID()
		var err error
		name := func(plain, word string, arc ...uint32) string {
			if err != nil || plain == "" {
				return ""
			}
			if len(plain) <= MaxDescriptor && !used[strings.ToLower(plain)] {
				used[strings.ToLower(plain)] = true
				return plain
			}
			if alt := c.stem + "Entry" + word; word != "" && len(alt) <= MaxDescriptor && !used[strings.ToLower(alt)] {
				used[strings.ToLower(alt)] = true
				return alt
			}
			var s string
			s, err = unused(used, plain, append(entry.Clone(), arc...))
			return s
		}
		word := func(plain string) string { return strings.TrimPrefix(plain, c.stem) }
		p := c.plain
		c.table, c.entry = name(p.table, ""), name(p.entry, "", 0)
		c.index = name(p.index, word(p.index), spmi.ColIndex)
		c.name, c.descr = name(p.name, word(p.name), spmi.ColName), name(p.descr, word(p.descr), spmi.ColDescr)
		for i, s := range c.cols {
			c.colNames = append(c.colNames, name(p.cols[i], word(p.cols[i]), spmi.ColumnOffset+s.it.Rel[len(s.it.Rel)-1]))
		}
		if err != nil {
			return badPath(strings.Join(c.pattern, "/"), err)
		}
		// SEQUENCE types start in upper case; they clash only with types.
		c.seq = strings.ToUpper(c.entry[:1]) + c.entry[1:]
	}
	for _, c := range m.classes {
		for p := c.parent; p != nil; p = p.parent {
			c.parentsIndex = append([]string{p.index}, c.parentsIndex...)
		}
	}
	return nil
}

// tableNodes are the OBJECT-IDENTITYs from base.TablesArc+depth down to
// each table's parent: base.200 (201 for rows of rows...), then the
// number of fixed arcs, then the fixed arcs, named after the contexts
// they pass.
func (m *model) tableNodes(used map[string]bool) (map[string]string, error) {
	names := map[string]string{} // base-relative OID -> descriptor
	take := func(plain string, oid asn1tree.OID) error {
		if _, ok := names[oid.String()]; ok {
			return nil
		}
		s := plain
		if len(s) > MaxDescriptor || used[strings.ToLower(s)] {
			var err error
			if s, err = unused(used, plain, oid); err != nil {
				return err
			}
		}
		used[strings.ToLower(s)] = true
		names[oid.String()] = s
		return nil
	}
	for _, c := range m.classes {
		if !c.picked {
			continue
		}
		top := spmi.TablesArc + uint32(c.depth)
		word := "Tables"
		if c.depth > 0 {
			word = fmt.Sprintf("SubTables%d", c.depth)
		}
		if err := take(m.prefix+word, asn1tree.OID{top}); err != nil {
			return nil, err
		}
		k := uint32(len(c.key))
		if err := take(fmt.Sprintf("%s%s%d", m.prefix, word, k), asn1tree.OID{top, k}); err != nil {
			return nil, err
		}
		var comps []string
		for _, p := range c.pattern {
			if p != "*" {
				comps = append(comps, p)
			}
		}
		for i := 1; i < len(c.key); i++ {
			oid := append(asn1tree.OID{top, k}, c.key[:i]...)
			if err := take(fmt.Sprintf("%s%s%d", plainDescriptor(comps[:i], c.key[:i]), word, k), oid); err != nil {
				return nil, err
			}
		}
		parent := append(asn1tree.OID{top, k}, c.key[:len(c.key)-1]...)
		c.under, c.underArc = names[parent.String()], c.key[len(c.key)-1]
	}
	return names, nil
}

// writeTables adds the definitions of the table view.
func (m *model) writeTables(add addFunc, self string, nodes map[string]string) {
	for oid, name := range nodes {
		rel := asn1tree.MustParse(oid)
		parent, arc := self, rel[len(rel)-1]
		if len(rel) > 1 {
			parent = nodes[rel[:len(rel)-1].String()]
		}
		descr := "Tables of the instantiable contexts, one row per instance (docs/TREE.md)."
		if rel[0] > spmi.TablesArc {
			descr = fmt.Sprintf("Tables of the rows of rows, %d deep: each indexed by the numbers of the rows above it, then its own (docs/TREE.md).", rel[0]-spmi.TablesArc)
		}
		if len(rel) == 2 {
			descr = fmt.Sprintf("The tables whose context path has %d fixed arcs.", rel[1])
		} else if len(rel) > 2 {
			descr = "Tables below this context."
		}
		add(name, m.base.Append(rel...), "OBJECT-IDENTITY", "", "", identity(name, descr, parent, arc))
	}
	for _, c := range m.classes {
		if !c.picked {
			continue
		}
		m.writeTable(add, c)
	}
}

func (m *model) writeTable(add addFunc, c *class) {
	entry := m.base.Append(c.entryOID()...)
	tableOID := entry[:len(entry)-1]
	of := strings.Join(c.pattern, "/") + "/"
	add(c.table, tableOID, "OBJECT-TYPE", "", "SEQUENCE OF "+c.seq, objectType(c.table, "SEQUENCE OF "+c.seq, "", "not-accessible",
		fmt.Sprintf("The instances of %s, one row each, with the statistics of each as columns. The same "+
			"values are served as scalars under the context (%s<instance>/<statistic>).", of, of), c.under, c.underArc))
	indexes := append(append([]string(nil), c.parentsIndex...), c.index)
	seq := []string{c.index + " Unsigned32"}
	for _, x := range []string{c.name, c.descr} {
		if x != "" {
			seq = append(seq, x+" DisplayString")
		}
	}
	for i, s := range c.cols {
		seq = append(seq, c.colNames[i]+" "+schema.SyntaxOf(s.it.Stat).Name)
	}
	entryText := fmt.Sprintf("%s OBJECT-TYPE\n%sSYNTAX      %s\n%sMAX-ACCESS  not-accessible\n%sSTATUS      current\n%sDESCRIPTION\n%s\n%sINDEX       { %s }\n%s::= { %s 1 }\n",
		c.entry, ind, c.seq, ind, ind, ind, quoted(ind+ind, "One instance of "+of+"."), ind, strings.Join(indexes, ", "), ind, c.table)
	entryText += "\n" + c.seq + " ::= SEQUENCE {\n" + ind + strings.Join(seq, ",\n"+ind) + "\n}\n"
	add(c.entry, entry, "OBJECT-TYPE", "", c.seq, entryText)
	add(c.index, entry.Append(spmi.ColIndex), "OBJECT-TYPE", "", c.indexSyntax(), objectType(c.index, c.indexSyntax(), "", "not-accessible",
		"The instance's number: the number below "+of+" in the scalar view, kept across restarts where the context keeps its numbers.", c.entry, spmi.ColIndex))
	if c.name != "" {
		add(c.name, entry.Append(spmi.ColName), "OBJECT-TYPE", "", "DisplayString", objectType(c.name, "DisplayString", "", "read-only",
			"The instance's name, as in its path ("+of+"<name>/).", c.entry, spmi.ColName))
	}
	if c.descr != "" {
		add(c.descr, entry.Append(spmi.ColDescr), "OBJECT-TYPE", "", "DisplayString", objectType(c.descr, "DisplayString", "", "read-only",
			"The instance's description.", c.entry, spmi.ColDescr))
	}
	for i, s := range c.cols {
		syn := schema.SyntaxOf(s.it.Stat)
		arc := spmi.ColumnOffset + s.it.Rel[len(s.it.Rel)-1]
		path := of + "*/" + s.comps[len(s.comps)-1]
		add(c.colNames[i], entry.Append(arc), "OBJECT-TYPE", path, syn.Name,
			objectType(c.colNames[i], syn.Name, columnUnits(s.it.Stat, syn), "read-only", statDescription(path, s.it.Stat), c.entry, arc))
	}
}

// columnUnits is the UNITS of a column: the statistic's, or for counters
// without units "events", so that every column says what it counts.
func columnUnits(d *spmiwire.StatDesc, syn schema.Syntax) string {
	if syn.Units != "" || d.Data == spmiwire.SiText {
		return syn.Units
	}
	if d.Val == ddswire.SiCounter {
		return "events"
	}
	return ""
}

// tableMembers are a class's accessible objects, for its context's group.
func (c *class) members() []string {
	var out []string
	for _, x := range []string{c.name, c.descr} {
		if x != "" {
			out = append(out, x)
		}
	}
	return append(out, c.colNames...)
}

// tableList describes the declared tables for Module.Tables.
func (m *model) tableList() []Table {
	var out []Table
	for _, c := range m.classes {
		if !c.picked {
			continue
		}
		e := m.base.Append(c.entryOID()...)
		t := Table{Name: c.table, OID: e[:len(e)-1], Pattern: strings.Join(c.pattern, "/") + "/*/",
			Index: append(append([]string(nil), c.parentsIndex...), c.index), Label: c.name, Descr: c.descr}
		for i, s := range c.cols {
			t.Columns = append(t.Columns, Column{Name: c.colNames[i], Stat: s.it.Stat, Kind: spmi.SNMPKind(s.it.Stat), Scale: s.it.Stat.Scale})
			// The statistic the description repeats names the row better
			// than a name, unless there is none (its index names it).
			if c.hasName && s.comps[len(s.comps)-1] == c.label {
				t.Label = c.colNames[i]
			}
		}
		out = append(out, t)
	}
	return out
}
