package mib_test

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"
	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/mib"
	"github.com/perfagent/subagent/mib/mibtest"
	"github.com/perfagent/subagent/responder"
	"github.com/perfagent/subagent/spmi"
)

const shippedExporterFile = "../MIBs/snmp_exporter/generator.yml"

// exporterConfig is what ExporterConfig wrote, read back line by line (the
// writer's own layout; the real generator parses it in the tool tests).
type exporterConfig struct {
	module    string
	maxReps   int // max_repetitions
	walk      []string
	lookups   map[string][]string          // lookup column -> source indexes
	overrides map[string]map[string]string // metric -> key -> value
}

func exporterConfigOf(t *testing.T, m *mib.Module, tree mib.Tree) (exporterConfig, []byte) {
	t.Helper()
	b, err := mib.ExporterConfig(m, tree)
	if err != nil {
		t.Fatal(err)
	}
	c := exporterConfig{lookups: map[string][]string{}, overrides: map[string]map[string]string{}}
	var section, src, metric string
	for _, line := range strings.Split(string(b), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		indent := len(line) - len(strings.TrimLeft(line, " "))
		f := strings.TrimSpace(line)
		switch {
		case indent == 2 && section == "modules":
			c.module = strings.TrimSuffix(f, ":")
		case indent == 4 && strings.HasPrefix(f, "max_repetitions: "):
			c.maxReps, _ = strconv.Atoi(strings.TrimPrefix(f, "max_repetitions: "))
		case indent <= 4:
			section = strings.TrimSuffix(f, ":")
		case section == "walk":
			name, _, _ := strings.Cut(strings.TrimPrefix(f, "- "), "  #")
			c.walk = append(c.walk, name)
		case section == "lookups" && strings.HasPrefix(f, "- source_indexes: ["):
			src = strings.TrimSuffix(strings.TrimPrefix(f, "- source_indexes: ["), "]")
		case section == "lookups" && strings.HasPrefix(f, "lookup: "):
			c.lookups[strings.TrimPrefix(f, "lookup: ")] = strings.Split(src, ", ")
		case section == "overrides" && indent == 6:
			metric = strings.TrimSuffix(f, ":")
			c.overrides[metric] = map[string]string{}
		case section == "overrides" && indent == 8:
			k, v, _ := strings.Cut(f, ": ")
			c.overrides[metric][k] = v
		}
	}
	return c, b
}

func TestShippedExporterConfigIsCurrent(t *testing.T) {
	tree := referenceTree(t)
	m := generate(t, tree, mib.Options{})
	b, err := mib.ExporterConfig(m, tree)
	if err != nil {
		t.Fatal(err)
	}
	if *update || os.Getenv("MIB_UPDATE") != "" {
		if err := os.MkdirAll(filepath.Dir(shippedExporterFile), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(shippedExporterFile, b, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", shippedExporterFile)
		return
	}
	have, err := os.ReadFile(shippedExporterFile)
	if err != nil {
		t.Fatalf("%v; generate it with make mib", err)
	}
	if !bytes.Equal(have, b) {
		t.Fatalf("%s is stale (%s); regenerate it with make mib", shippedExporterFile, firstDiff(have, b))
	}
}

// The reference tree's configuration: every declared scalar and table is
// walked, the scalar view of instances never; each table's index becomes
// its name; levels on the Counter64 wire are gauges; scaled values are
// scaled back.
func TestExporterConfigOfTheReferenceTree(t *testing.T) {
	tree := referenceTree(t)
	m := generate(t, tree, mib.Options{})
	c, _ := exporterConfigOf(t, m, tree)
	if c.module != "subagent" {
		t.Errorf("module %q, want subagent", c.module)
	}
	oid := map[string]asn1tree.OID{}
	for _, o := range m.Objects {
		oid[o.Name] = o.OID
	}
	var walked []asn1tree.OID
	for _, w := range c.walk {
		if oid[w] == nil {
			t.Fatalf("walk %q is no definition of the module", w)
		}
		walked = append(walked, oid[w])
	}
	under := func(o asn1tree.OID) bool {
		return slices.ContainsFunc(walked, func(w asn1tree.OID) bool { return o.HasPrefix(w) })
	}
	// Every scalar by name (the exporter gets them in batches, whatever
	// their context: below), no context.
	for _, w := range []string{"cpu", "cpuTotal", "mem", "pagSp", "proc", "agent", "agentAgentx"} {
		if slices.Contains(c.walk, w) {
			t.Errorf("walk has the context %s: %v", w, c.walk)
		}
	}
	scalars := scalarNames(m)
	for _, n := range scalars {
		if !slices.Contains(c.walk, n) {
			t.Errorf("scalar %s is not walked by name", n)
		}
	}
	if len(scalars) < 50 {
		t.Fatalf("only %d scalars in the module", len(scalars))
	}
	// No statistic of a row is walked in the scalar view; an aggregate's
	// (CPU/total) are scalars, no row's.
	aggregates := map[string]bool{}
	for _, it := range tree.Items {
		if it.Aggregate {
			aggregates[it.Path] = true
		}
	}
	rows := 0
	for _, it := range tree.Items {
		if it.IsStat() && inTable(m, it.Path) && !aggregates[it.Path[:strings.LastIndexByte(it.Path, '/')+1]] {
			rows++
			if o := m.Base.Append(it.Rel...); under(o) {
				t.Errorf("the row statistic %s (%s) is walked in the scalar view", it.Path, o)
			}
		}
	}
	if rows < 50 {
		t.Fatalf("only %d row statistics in the reference tree", rows)
	}

	// Every table is walked but the records' (the Directory catalogue and
	// the notification log), whose columns get no lookup or override.
	var records, tables []string
	for _, tb := range m.Tables {
		rec := strings.HasPrefix(tb.Pattern, "Directory/") || strings.HasPrefix(tb.Pattern, "NotifLog/")
		if rec {
			records = append(records, tb.Name)
		} else {
			tables = append(tables, tb.Name)
		}
		if walks := under(tb.OID); walks == rec {
			t.Errorf("table %s (%s): walked %v, want %v", tb.Name, tb.Pattern, walks, !rec)
		}
		if !rec {
			continue
		}
		for _, col := range tb.Columns {
			if _, ok := c.overrides[col.Name]; ok {
				t.Errorf("override of %s, a column of the records table %s", col.Name, tb.Name)
			}
		}
		for _, x := range append([]string{tb.Label}, tb.Index...) {
			if _, ok := c.overrides[x]; ok {
				t.Errorf("override of %s, of the records table %s", x, tb.Name)
			}
			if _, ok := c.lookups[x]; ok {
				t.Errorf("lookup of %s, of the records table %s", x, tb.Name)
			}
		}
	}
	// The tables in as few walks as the grouping nodes allow: one per
	// node holding walked tables only, none above a records table.
	want := []string{"subagentTables1", "procTables2", "agentTables2", "rTimeTables2", "subagentSubTables12"}
	var tableWalks []string
	for _, w := range c.walk {
		if !slices.Contains(scalarNames(m), w) {
			tableWalks = append(tableWalks, w)
		}
	}
	if !slices.Equal(tableWalks, want) {
		t.Errorf("the tables are walked as %v, want %v", tableWalks, want)
	}
	if len(records) != 5 {
		t.Errorf("records tables %v, want the three Directory tables and the NotifLog's two", records)
	}
	// The records' scalars (counts, generations) are measurements: walked.
	for _, w := range []string{"directoryGeneration", "directoryStats", "notifLogLogged"} {
		if !slices.Contains(c.walk, w) {
			t.Errorf("walk lacks %s: %v", w, c.walk)
		}
	}

	// One lookup per walked table labelled by a column (processes by
	// their index: the pid), and the processes' command.
	if len(c.lookups) != len(tables) {
		t.Errorf("%d lookups for %d walked tables, want as many (procPidName for procPidTable)", len(c.lookups), len(tables))
	}
	for _, tb := range m.Tables {
		if !slices.Contains(tables, tb.Name) {
			continue
		}
		if got := c.lookups[tb.Label]; tb.Label != "" && !slices.Equal(got, tb.Index) {
			t.Errorf("lookup %s from %v, want from %v", tb.Label, got, tb.Index)
		}
	}
	if got := c.lookups["fsMount"]; !slices.Equal(got, []string{"fsIndex"}) {
		t.Errorf("file systems' label from %v, want fsIndex to fsMount", got)
	}
	if got := c.lookups["procPidName"]; !slices.Equal(got, []string{"procPidIndex"}) {
		t.Errorf("processes' command label from %v, want procPidIndex", got)
	}

	overrides := map[string]map[string]string{
		"cpuIndex":       {"ignore": "true"},
		"cpuName":        {"ignore": "true"},
		"fsMount":        {"ignore": "true"},
		"fsSize":         {"type": "gauge"},
		"fsInodes":       {"type": "gauge"},
		"memRealPctFree": {"scale": "0.01"},
		"fsPctUsed":      {"scale": "0.01"},
		"procLoadavg1":   {"scale": "0.01"},
		"agentRefreshms": {"scale": "0.001"},
		// Counters, plain gauges, text and descriptions are left as the
		// generator reads them.
		"cpuIdle": nil, "memVirtPagein": nil, "memRealFree": nil, "lanSpeed": nil,
		"fsName": nil, "procPidName": nil, "cpuDescr": nil,
	}
	for name, w := range overrides {
		if got := c.overrides[name]; !sameMap(got, w) {
			t.Errorf("overrides of %s: %v, want %v", name, got, w)
		}
	}
	for name := range c.overrides {
		if oid[name] == nil {
			t.Errorf("override of %q, no definition of the module", name)
		}
	}
}

// A module of some subtrees walks each of its tables alone: a grouping
// node above them also holds tables the tree serves and the module left
// out (the Directory's, thousands of rows).
func TestExporterConfigOfAPartialModuleWalksTablesAlone(t *testing.T) {
	tree := referenceTree(t)
	m := generate(t, tree, mib.Options{Include: []string{"CPU/", "Disk/", "Agent/"}})
	if !m.Partial {
		t.Fatal("a module of included subtrees is not Partial")
	}
	c, _ := exporterConfigOf(t, m, tree)
	var tableWalks []string
	for _, w := range c.walk {
		if !slices.Contains(scalarNames(m), w) {
			tableWalks = append(tableWalks, w)
		}
	}
	if want := []string{"cpuTable", "diskTable", "agentProvTable", "agentExprTable"}; !slices.Equal(tableWalks, want) {
		t.Errorf("the tables are walked as %v, want %v", tableWalks, want)
	}
	if full := generate(t, tree, mib.Options{}); full.Partial {
		t.Error("the module of the whole tree is Partial")
	}
}

// The exporter gets the scalars max_repetitions to a Get, and a Get's
// answer, unlike a GetBulk's, cannot be cut short: past the responder's
// message size it is tooBig and the scrape fails. The answer to the
// max_repetitions scalars of the module with the largest answers, each at
// its widest value (text at DisplayString's 255 octets, which
// spmi.SNMPValue keeps to; a DateAndTime's 11; numbers at their type's
// most octets), fits the responder's default snmp.max_msg_size, over
// SNMPv2c and, its PDU with the most an SNMPv3 message adds, over v3.
func TestExporterGetsFitTheResponder(t *testing.T) {
	tree := referenceTree(t)
	m := generate(t, tree, mib.Options{})
	c, _ := exporterConfigOf(t, m, tree)
	if c.maxReps != mib.ExporterMaxRepetitions || c.maxReps < 1 {
		t.Fatalf("max_repetitions %d, want %d", c.maxReps, mib.ExporterMaxRepetitions)
	}
	stats := map[string]*spmiwire.StatDesc{}
	for i := range tree.Items {
		if it := &tree.Items[i]; it.IsStat() {
			stats[it.Path] = it.Stat
		}
	}
	names := scalarNames(m)
	texts := 0
	var widest []gosnmp.SnmpPDU
	for _, o := range m.Objects {
		if !slices.Contains(names, o.Name) {
			continue
		}
		d := stats[o.Path]
		pdu := gosnmp.SnmpPDU{Name: "." + o.OID.Append(0).String()}
		switch k := spmi.SNMPKind(d); {
		case k == asn1tree.Counter64:
			pdu.Type, pdu.Value = gosnmp.Counter64, uint64(math.MaxUint64)
		case k == asn1tree.Gauge32:
			pdu.Type, pdu.Value = gosnmp.Gauge32, uint(math.MaxUint32)
		case k == asn1tree.Integer32:
			pdu.Type, pdu.Value = gosnmp.Integer, math.MinInt32
		case k == asn1tree.OctetString && d.Form == spmiwire.FormTime:
			pdu.Type, pdu.Value = gosnmp.OctetString, []byte(spmi.DateAndTime(time.Now()))
		case k == asn1tree.OctetString:
			texts++
			pdu.Type, pdu.Value = gosnmp.OctetString, bytes.Repeat([]byte("x"), spmi.MaxDisplayString)
		default:
			t.Fatalf("%s: served as %v, which this test does not size", o.Name, k)
		}
		widest = append(widest, pdu)
	}
	if len(widest) != len(names) || texts < 2 {
		t.Fatalf("%d of %d scalars sized, %d texts: want all, and agentVersion and notifLogSaveerr", len(widest), len(names), texts)
	}
	var pdu int // of the last message sized
	size := func(vbs []gosnmp.SnmpPDU) int {
		p := gosnmp.SnmpPacket{Version: gosnmp.Version2c, Community: mib.ExporterCommunity, PDUType: gosnmp.GetResponse,
			RequestID: math.MaxInt32, Variables: vbs}
		b, err := p.MarshalMsg()
		if err != nil {
			t.Fatal(err)
		}
		// SEQUENCE { version, community, PDU }: the PDU is what is left
		// after the SEQUENCE's header, the version's 3 octets and the
		// community's.
		head := 2
		if b[1] >= 0x80 {
			head += int(b[1] & 0x7f)
		}
		pdu = len(b) - head - 3 - 2 - len(mib.ExporterCommunity)
		return len(b)
	}
	one := map[string]int{}
	for _, v := range widest {
		one[v.Name] = size([]gosnmp.SnmpPDU{v})
	}
	slices.SortFunc(widest, func(a, b gosnmp.SnmpPDU) int { return one[b.Name] - one[a.Name] })
	n := min(c.maxReps, len(widest))
	got := size(widest[:n])
	if got > responder.DefaultMaxMsgSize {
		t.Errorf("a Get of the %d widest scalars is answered in %d octets, more than the responder's %d", n, got, responder.DefaultMaxMsgSize)
	}
	if room := responder.DefaultMaxMsgSize - responder.MaxV3Overhead; pdu > room {
		t.Errorf("over SNMPv3, the PDU of the %d widest scalars is %d octets, more than the %d a message has room for", n, pdu, room)
	}
	t.Logf("the widest Get of %d scalars: %d octets of %d; its PDU %d of the %d an SNMPv3 message has room for", n, got, responder.DefaultMaxMsgSize, pdu, responder.DefaultMaxMsgSize-responder.MaxV3Overhead)
}

// scalarNames are m's scalars: its OBJECT-TYPEs of the tree outside
// its tables.
func scalarNames(m *mib.Module) []string {
	var names []string
	for _, o := range m.Objects {
		inTable := slices.ContainsFunc(m.Tables, func(tb mib.Table) bool { return o.OID.HasPrefix(tb.OID) })
		if o.Macro == "OBJECT-TYPE" && o.Path != "" && !inTable {
			names = append(names, o.Name)
		}
	}
	return names
}

// inTable reports whether path is a statistic of a table row of m.
func inTable(m *mib.Module, path string) bool {
	c := strings.Split(path, "/")
	for _, tb := range m.Tables {
		p := strings.Split(strings.TrimSuffix(tb.Pattern, "/"), "/")
		if len(c) != len(p)+1 {
			continue
		}
		match := true
		for i := range p {
			if p[i] != "*" && p[i] != c[i] {
				match = false
			}
		}
		if match {
			return true
		}
	}
	return false
}

func sameMap(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// The synthetic tree has what the fixture lacks: 64-bit and negative
// scaled scalars, a scaled counter column, rows of rows and a module of
// another name; the real generator accepts the configuration and
// resolves every lookup, index and override.
func TestExporterConfigOfTheSyntheticTree(t *testing.T) {
	tree := mib.FromSnapshot(tablesSnapshot(t))
	m := generate(t, tree, mib.Options{Module: "PERF-AGENT-MIB"})
	c, text := exporterConfigOf(t, m, tree)
	if c.module != "perf_agent" {
		t.Errorf("module %q, want perf_agent", c.module)
	}
	want := map[string]map[string]string{
		"memRealAvail": {"type": "gauge", "scale": "0.01"}, // CounterBasedGauge64 scaled
		"memRealSize":  {"type": "gauge"},
		"memRealTemp":  {"scale": "0.1"}, // ScaledInteger1
		"memRealFrag":  {"scale": "0.001"},
		"memRealPages": nil,
		"cpuUser":      {"scale": "0.01"}, // a counter: scaled, still a counter
		"cpuIdle":      {"scale": "0.01"},
		"procPidNice":  nil,
		"appTranIndex": {"ignore": "true"},
		"appTranName":  {"ignore": "true"},
		"appTranCount": nil,
	}
	for name, w := range want {
		if got := c.overrides[name]; !sameMap(got, w) {
			t.Errorf("overrides of %s: %v, want %v", name, got, w)
		}
	}
	// Rows of rows: the application's name from its index, the
	// transaction's from both.
	if got := c.lookups["appName"]; !slices.Equal(got, []string{"appIndex"}) {
		t.Errorf("lookup appName from %v", got)
	}
	if got := c.lookups["appTranName"]; !slices.Equal(got, []string{"appIndex", "appTranIndex"}) {
		t.Errorf("lookup appTranName from %v", got)
	}
	// No records table: every table under the table view's nodes, each
	// walked whole; the scalars by name.
	if want := append(scalarNames(m), "perfAgentTables", "perfAgentSubTables1"); !slices.Equal(c.walk, want) {
		t.Errorf("walk %v, want %v", c.walk, want)
	}

	ex := mibtest.InstallExporter(t)
	_, dirs := writeModule(t, m)
	gen := filepath.Join(t.TempDir(), "generator.yml")
	if err := os.WriteFile(gen, text, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := os.ReadFile(ex.Generate(t, dirs, gen))
	if err != nil {
		t.Fatal(err)
	}
	snmp := string(out)
	for _, w := range []string{
		"  perf_agent:\n",
		"- name: memRealAvail\n      oid: 1.3.6.1.4.1.32473.1.2.1.5\n      type: gauge\n",
		"      scale: 0.01\n",
		"- name: appTranCount\n      oid: 1.3.6.1.4.1.32473.1.201.1.20.1.13\n      type: counter\n",
		"      - labelname: appIndex\n        type: gauge\n      - labelname: appTranIndex\n        type: gauge\n",
		// A process's series carry its pid and its command.
		"      lookups:\n      - labels:\n        - procPidIndex\n        labelname: procPidInstName\n        oid: 1.3.6.1.4.1.32473.1.200.2.10.100.1.2\n        type: DisplayString\n" +
			"      - labels:\n        - procPidIndex\n        labelname: procPidName\n        oid: 1.3.6.1.4.1.32473.1.200.2.10.100.1.12\n        type: DisplayString\n",
		"      lookups:\n      - labels:\n        - appIndex\n        labelname: appName\n        oid: 1.3.6.1.4.1.32473.1.200.1.20.1.2\n        type: DisplayString\n" +
			"      - labels:\n        - appIndex\n        - appTranIndex\n        labelname: appTranName\n        oid: 1.3.6.1.4.1.32473.1.201.1.20.1.2\n        type: DisplayString\n",
	} {
		if !strings.Contains(snmp, w) {
			t.Errorf("snmp.yml lacks %q:\n%s", w, snmp)
		}
	}
	for _, not := range []string{"- name: appTranIndex\n", "- name: appTranName\n", "- name: cpuIndex\n"} {
		if strings.Contains(snmp, not) {
			t.Errorf("snmp.yml has the ignored %q", not)
		}
	}
}

// A name YAML 1.1 reads as a boolean is quoted: the module of ON-MIB is
// "on" (descriptors of scalars and tables are two words or more).
func TestExporterConfigQuotesYAMLWords(t *testing.T) {
	tree := mib.Tree{Base: testBase, Items: []mib.Item{
		{Path: "On/", Descr: "Switches", Rel: asn1tree.OID{3}},
		{Path: "On/no", Descr: "A level", Rel: asn1tree.OID{3, 1}, Stat: &spmiwire.StatDesc{Name: "no", Descr: "A level", ASN: 1, Max: 10, Val: ddswire.SiQuantity}},
	}}
	m := generate(t, tree, mib.Options{Module: "ON-MIB"})
	c, text := exporterConfigOf(t, m, tree)
	if !strings.Contains(string(text), "\n  \"on\":\n    max_repetitions: 25\n") {
		t.Errorf("the module on is not quoted:\n%s", text)
	}
	if !slices.Equal(c.walk, []string{"onNo"}) {
		t.Errorf("walk %v, want the scalar onNo", c.walk)
	}
}

const shippedCollectdFile = "../MIBs/collectd/subagent.conf"

// The shipped collectd snippet names its numeric OIDs in comments
// ("# cpuIdle"): each is that object of the shipped module (a scalar with
// its .0), a table's rows are named by its name column, scaled values get
// Scale 10^-N and counters none (collectd ignores Scale on them). The
// real collectd reads it in cmd/subagent (TestCollectdThroughSnmpPlugin).
func TestShippedCollectdSnippetMatchesTheModule(t *testing.T) {
	tree := referenceTree(t)
	m := generate(t, tree, mib.Options{})
	objects := map[string]mib.Object{}
	for _, o := range m.Objects {
		objects[o.Name] = o
	}
	stats := map[string]*spmiwire.StatDesc{} // by path, and by column name
	for i := range tree.Items {
		if it := &tree.Items[i]; it.IsStat() {
			stats[it.Path] = it.Stat
		}
	}
	tableOf := map[string]mib.Table{} // column -> its table
	for _, tb := range m.Tables {
		for _, c := range tb.Columns {
			tableOf[c.Name] = tb
			stats[c.Name] = c.Stat
		}
	}
	b, err := os.ReadFile(shippedCollectdFile)
	if err != nil {
		t.Fatal(err)
	}
	type ref struct{ oid, name string }
	var (
		data, scale     string
		table           bool
		values, inst    []ref
		blocks, checked int
	)
	for n, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		code, comment, _ := strings.Cut(line, "#")
		key, rest, _ := strings.Cut(strings.TrimSpace(code), " ")
		var refs []ref
		if f := strings.Fields(rest); len(f) > 0 && strings.HasPrefix(f[0], `"1.3.6.`) {
			names := strings.Fields(comment)
			if len(names) != len(f) {
				t.Errorf("line %d: %d OIDs named %v", n+1, len(f), names)
				continue
			}
			for i := range f {
				refs = append(refs, ref{strings.Trim(f[i], `"`), names[i]})
			}
		}
		switch key {
		case "<Data":
			data, scale, table, values, inst = strings.Trim(rest, `">`), "", false, nil, nil
		case "Table":
			table = rest == "true"
		case "Scale":
			scale = rest
		case "Values":
			values = refs
		case "PluginInstanceOID", "TypeInstanceOID", "Instance":
			inst = refs
		case "</Data>":
			blocks++
			if len(values) == 0 {
				t.Errorf("Data %q has no Values", data)
			}
			if table && len(inst) != 1 {
				t.Errorf("Data %q: a table's rows need their name column as instance", data)
			}
			for _, r := range append(values, inst...) {
				o, ok := objects[r.name]
				if !ok {
					t.Errorf("Data %q: %s is no object of the module", data, r.name)
					continue
				}
				want := o.OID.String()
				if !table {
					want += ".0"
				}
				if r.oid != want {
					t.Errorf("Data %q: %s is %s, the module has %s", data, r.name, r.oid, want)
				}
			}
			for _, r := range values {
				tb, inTable := tableOf[r.name]
				if inTable != table {
					t.Errorf("Data %q: %s in a block with Table %v", data, r.name, table)
					continue
				}
				if name := tb.OID.Append(1, 2).String(); table && len(inst) == 1 && inst[0].oid != name {
					t.Errorf("Data %q: %s's rows named by %s, not by its name column %s", data, tb.Name, inst[0].oid, name)
					inst = nil // said once
				}
				d := stats[r.name] // a column's
				if !table {
					d = stats[objects[r.name].Path]
				}
				if d == nil {
					t.Errorf("Data %q: %s is no statistic", data, r.name)
					continue
				}
				checked++
				switch want := strconv.FormatFloat(math.Pow10(-int(d.Scale)), 'f', -1, 64); {
				case d.Val == ddswire.SiCounter && scale != "":
					t.Errorf("Data %q: Scale %s on the counter %s, which collectd does not scale", data, scale, r.name)
				case d.Scale > 0 && scale != want:
					t.Errorf("Data %q: %s is served ×10^%d, Scale %q, want %s", data, r.name, d.Scale, scale, want)
				}
			}
		}
	}
	if blocks < 20 || checked < 30 {
		t.Fatalf("%s: %d Data blocks, %d values checked", shippedCollectdFile, blocks, checked)
	}
}
