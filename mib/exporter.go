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

// ExporterCommunity is that auth's community.
const ExporterCommunity = "public"

// ExporterMaxRepetitions is the module's max_repetitions (the exporter's
// default, written down so that a new default cannot change it): the
// repetitions of its GetBulks, and the most scalars it asks in one Get,
// whose answer, unlike a GetBulk's, cannot be cut short to fit the
// responder's message size (TestExporterGetsFitTheResponder). 60 instead
// halves the exchanges, but saved the daemon no CPU (docs/FLEET.md, Cost).
const ExporterMaxRepetitions = 25

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
//   - every scalar by name (the generator gets those with .0), so that
//     the scalar view of instances is never walked;
//   - every table but the records' (ExporterRecords), each under the
//     highest of the module's grouping nodes that holds nothing else
//     (exporterWalks).
//
// Both shapes save exchanges, each a wake-up of the agent and of the
// exporter (25 a scrape instead of 51 on the fixture host: docs/FLEET.md,
// Cost): the exporter gets its scalars in batches of max_repetitions
// whatever their context, where a walk costs a GetBulk per
// max_repetitions values plus one past its end, and two for an empty
// table (gosnmp follows a GetBulk that leaves the subtree at once with a
// Get of its root).
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
	scalars, err := exporterScalars(m, stats)
	if err != nil {
		return nil, err
	}
	var tables []Table // the walked ones
	for _, tb := range m.Tables {
		if !isRecords(tb) {
			tables = append(tables, tb)
		}
	}

	var b strings.Builder
	fmt.Fprintf(&b, "# snmp_exporter generator configuration for %s, written from the module by\n", m.Name)
	b.WriteString("# the subagent's MIB generator (mib.ExporterConfig; docs/MIB.md, Prometheus):\n")
	b.WriteString("# regenerate it with the module, never edit it. Generate snmp.yml with\n")
	b.WriteString("#   generator generate -m <dir of the IETF base modules> -m MIBs -g <this file> -o snmp.yml\n")
	fmt.Fprintf(&b, "auths:\n  %s:\n    version: 2\n    community: %s\n", ExporterAuth, ExporterCommunity)
	fmt.Fprintf(&b, "modules:\n  %s:\n    max_repetitions: %d\n    walk:\n", yamlName(ExporterModule(m.Name)), ExporterMaxRepetitions)
	for _, s := range scalars {
		fmt.Fprintf(&b, "      - %s  # %s\n", yamlName(s.name), s.path)
	}
	for _, w := range exporterWalks(m, tables) {
		fmt.Fprintf(&b, "      - %s  # %s\n", yamlName(w.name), strings.Join(w.patterns, " "))
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

// yamlName quotes the descriptors YAML 1.1 (the generator's parser) reads
// as booleans or null; other descriptors are plain letters and digits.
func yamlName(s string) string {
	switch s {
	case "y", "yes", "n", "no", "true", "false", "on", "off", "null":
		return `"` + s + `"`
	}
	return s
}

// exporterScalar is a scalar of the module and its statistic.
type exporterScalar struct {
	name, path string
	stat       *spmiwire.StatDesc
}

// exporterScalars are m's scalars (every OBJECT-TYPE of the tree but a
// table's column), in OID order.
func exporterScalars(m *Module, stats map[string]*spmiwire.StatDesc) ([]exporterScalar, error) {
	columns := map[string]bool{}
	for _, tb := range m.Tables {
		for _, c := range tb.Columns {
			columns[c.Name] = true
		}
	}
	var scalars []exporterScalar
	for _, o := range m.Objects {
		if o.Path == "" || o.Macro != "OBJECT-TYPE" || columns[o.Name] {
			continue
		}
		d := stats[o.Path]
		if d == nil {
			return nil, fmt.Errorf("mib: exporter configuration: %s (%s) is not a statistic of the tree", o.Name, o.Path)
		}
		scalars = append(scalars, exporterScalar{o.Name, o.Path, d})
	}
	return scalars, nil
}

// exporterWalk is one walk of tables: a table, or a grouping node of
// the table view and the tables under it.
type exporterWalk struct {
	name     string
	patterns []string // the rows' paths of its tables
}

// exporterWalks covers the walked tables with as few walks as the
// module's grouping nodes allow: each table is walked under the highest
// node (subagentTables1, rTimeTables2, ...) under which the module
// defines nothing but walked tables, else alone. A grouping node has no
// path: it is no context, so no scalar view of instances lies under it,
// only tables, and the module names every table of the tree it was made
// from, unless it is Partial: then each table is walked alone, lest a
// walk cross the tables left out (the Directory's thousands of rows).
func exporterWalks(m *Module, tables []Table) []exporterWalk {
	walkedUnder := func(o asn1tree.OID) bool {
		for _, tb := range tables {
			if o.HasPrefix(tb.OID) {
				return true
			}
		}
		return false
	}
	grouping := func(o Object) bool { return o.Macro == "OBJECT-IDENTITY" && o.Path == "" }
	pure := func(p asn1tree.OID) bool {
		if m.Partial {
			return false
		}
		for _, o := range m.Objects {
			if len(o.OID) > len(p) && o.OID.HasPrefix(p) && !grouping(o) && !walkedUnder(o.OID) {
				return false
			}
		}
		return true
	}
	var walks []exporterWalk
	at := map[string]int{} // walk name -> index in walks
	for _, tb := range tables {
		name := tb.Name
		for _, o := range m.Objects { // in OID order: the highest first
			if grouping(o) && len(o.OID) < len(tb.OID) && tb.OID.HasPrefix(o.OID) && pure(o.OID) {
				name = o.Name
				break
			}
		}
		i, ok := at[name]
		if !ok {
			i = len(walks)
			at[name] = i
			walks = append(walks, exporterWalk{name: name})
		}
		walks[i].patterns = append(walks[i].patterns, tb.Pattern)
	}
	return walks
}
