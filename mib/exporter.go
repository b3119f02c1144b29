package mib

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/spmi"
)

// ExporterAuth is the snmp_exporter auth the generator configuration
// declares: SNMPv2c with the community "public", the exporter's default
// auth name and the daemon's default community.
const ExporterAuth = "public_v2"

// ExporterRecords are the subtrees whose tables the exporter module does
// not walk: records about the agent, not measurements of the host. The
// Directory tables are its catalogue of the tree (a row per statistic,
// context and change, as text) and NotifLog's the notifications it sent;
// in Prometheus they would be three quarters of every scrape's samples,
// stored every interval though they change only with the tree or a
// notification (docs/FLEET.md, Cost). Their scalars (counts and
// generations) are measurements and stay. snmpwalk, subagent peek and
// NOTIFICATION-LOG-MIB read the records.
var ExporterRecords = []string{"Directory/", "NotifLog/"}

// isRecords reports whether a table's rows lie in ExporterRecords.
func isRecords(tb Table) bool {
	for _, p := range ExporterRecords {
		if strings.HasPrefix(tb.Pattern, p) {
			return true
		}
	}
	return false
}

// ExporterModule is the snmp_exporter module name for a MIB module:
// SUBAGENT-MIB gives subagent.
func ExporterModule(mibModule string) string {
	s := strings.TrimSuffix(mibModule, "-MIB")
	return strings.ToLower(strings.ReplaceAll(s, "-", "_"))
}

// ExporterConfig writes the configuration of Prometheus's snmp_exporter
// generator (its generator.yml, v0.30 format) for m, which Generate made
// from t. One module, ExporterModule(m.Name), walks:
//
//   - the scalars: each context holding no table rows as a whole, the
//     scalars of the others one by one (the generator gets those with .0),
//     so that the scalar view of instances is never walked;
//   - every table but the records' (ExporterRecords).
//
// Each table's INDEX is looked up to its label column (Table.Label: the
// name column, fsMount for file systems), which becomes a label
// (cpuIndex → cpuName="cpu0"); processes also get their command
// (procPidName) beside the pid. The overrides drop the index and
// name columns (the label carries them), type CounterBasedGauge64 as
// gauge (the generator reads it as Counter64, a counter) and scale scaled
// values back to their unit, which the generator otherwise exports raw
// (it ignores DISPLAY-HINT).
//
// The scalars' statistics come from t: an Object has only its SYNTAX,
// which does not say the scale of a 64-bit one.
func ExporterConfig(m *Module, t Tree) ([]byte, error) {
	stats := map[string]*spmiwire.StatDesc{}
	for i := range t.Items {
		if it := &t.Items[i]; it.IsStat() {
			stats[it.Path] = it.Stat
		}
	}
	contexts := map[string]string{} // path -> descriptor
	columns := map[string]bool{}
	for _, tb := range m.Tables {
		for _, c := range tb.Columns {
			columns[c.Name] = true
		}
	}
	type scalar struct {
		name, path string
		stat       *spmiwire.StatDesc
	}
	var scalars []scalar
	var tables []Table // the walked ones
	for _, tb := range m.Tables {
		if !isRecords(tb) {
			tables = append(tables, tb)
		}
	}
	for _, o := range m.Objects {
		switch {
		case o.Path == "":
		case o.Macro == "OBJECT-IDENTITY" && strings.HasSuffix(o.Path, "/"):
			contexts[o.Path] = o.Name
		case o.Macro == "OBJECT-TYPE" && !columns[o.Name]:
			d := stats[o.Path]
			if d == nil {
				return nil, fmt.Errorf("mib: exporter configuration: %s (%s) is not a statistic of the tree", o.Name, o.Path)
			}
			scalars = append(scalars, scalar{o.Name, o.Path, d})
		}
	}

	var b strings.Builder
	fmt.Fprintf(&b, "# snmp_exporter generator configuration for %s, written from the module by\n", m.Name)
	b.WriteString("# the subagent's MIB generator (mib.ExporterConfig; docs/MIB.md, Prometheus):\n")
	b.WriteString("# regenerate it with the module, never edit it. Generate snmp.yml with\n")
	b.WriteString("#   generator generate -m <dir of the IETF base modules> -m MIBs -g <this file> -o snmp.yml\n")
	fmt.Fprintf(&b, "auths:\n  %s:\n    version: 2\n    community: public\n", ExporterAuth)
	fmt.Fprintf(&b, "modules:\n  %s:\n    walk:\n", yamlName(ExporterModule(m.Name)))

	// Scalars: the outermost context around each that holds no rows.
	rowParents := make([][]string, len(m.Tables))
	for i, tb := range m.Tables {
		p := splitPath(tb.Pattern)
		rowParents[i] = p[:len(p)-1]
	}
	holdsRows := func(path string) bool {
		c := splitPath(path)
		for _, p := range rowParents {
			if len(c) <= len(p) && matchComps(c, p[:len(c)]) {
				return true
			}
		}
		return false
	}
	walked := map[string]bool{}
	walk := func(name, comment string) {
		if !walked[name] {
			walked[name] = true
			fmt.Fprintf(&b, "      - %s  # %s\n", yamlName(name), comment)
		}
	}
	for _, s := range scalars {
		name, what := s.name, s.path
		comps := splitPath(s.path)
		for i := 1; i < len(comps); i++ {
			ctx := strings.Join(comps[:i], "/") + "/"
			if d, ok := contexts[ctx]; ok && !holdsRows(ctx) {
				name, what = d, ctx
				break
			}
		}
		walk(name, what)
	}
	for _, tb := range tables {
		walk(tb.Name, tb.Pattern)
	}

	b.WriteString("    lookups:\n")
	for _, tb := range tables {
		if tb.Label == "" {
			continue // named by its index alone (Table.Label): a PID
		}
		names := make([]string, len(tb.Index))
		for i, x := range tb.Index {
			names[i] = yamlName(x)
		}
		fmt.Fprintf(&b, "      - source_indexes: [%s]\n        lookup: %s\n", strings.Join(names, ", "), yamlName(tb.Label))
	}
	// Processes: a pid alone says nothing on a dashboard, so every series
	// also carries the command (procPidName="java"); the pid stays.
	for _, tb := range tables {
		if col := commandColumn(tb); col != "" {
			fmt.Fprintf(&b, "      - source_indexes: [%s]\n        lookup: %s\n", yamlName(tb.Index[len(tb.Index)-1]), yamlName(col))
		}
	}

	b.WriteString("    overrides:\n")
	override := func(name, what string) {
		fmt.Fprintf(&b, "      %s:\n        %s\n", yamlName(name), what)
	}
	statOverride := func(name string, d *spmiwire.StatDesc) {
		if d.Data == spmiwire.SiText {
			return
		}
		var lines []string
		if spmi.SNMPKind(d) == asn1tree.Counter64 && d.Val != ddswire.SiCounter {
			lines = append(lines, "type: gauge")
		}
		if d.Scale > 0 {
			lines = append(lines, "scale: "+strconv.FormatFloat(math.Pow10(-int(d.Scale)), 'f', -1, 64))
		}
		if len(lines) > 0 {
			override(name, strings.Join(lines, "\n        "))
		}
	}
	for _, s := range scalars {
		statOverride(s.name, s.stat)
	}
	for _, tb := range tables {
		override(tb.Index[len(tb.Index)-1], "ignore: true")
		if tb.Label != "" {
			override(tb.Label, "ignore: true")
		}
		for _, c := range tb.Columns {
			statOverride(c.Name, c.Stat)
		}
	}
	return []byte(b.String()), nil
}

// commandColumn is the column of a process table's command (the text
// statistic "name" of Proc/pid/*/), or "" for any other table.
func commandColumn(tb Table) string {
	if tb.Pattern != "Proc/pid/*/" {
		return ""
	}
	for _, c := range tb.Columns {
		if c.Stat.Name == "name" && c.Stat.Data == spmiwire.SiText {
			return c.Name
		}
	}
	return ""
}

// splitPath is a path's components: "CPU/*/" -> [CPU *].
func splitPath(p string) []string { return strings.Split(strings.TrimSuffix(p, "/"), "/") }

// matchComps reports whether path components match a pattern's, "*"
// matching any one.
func matchComps(c, pat []string) bool {
	for i := range c {
		if pat[i] != "*" && pat[i] != c[i] {
			return false
		}
	}
	return true
}

// yamlName quotes the descriptors YAML 1.1 (the generator's parser) reads
// as booleans or null; other descriptors are plain letters and digits.
func yamlName(s string) string {
	switch s {
	case "y", "yes", "n", "no", "true", "false", "on", "off", "null":
		return `"` + s + `"`
	}
	return s
}
