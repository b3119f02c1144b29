package main

import (
	"context"
	"fmt"
	"github.com/perfagent/subagent/client/consumer"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/arm"
	client "github.com/perfagent/subagent/client/ddsclient"
	"github.com/perfagent/subagent/internal/snmpdtest"
	"github.com/perfagent/subagent/mib"
	"github.com/perfagent/subagent/mib/mibtest"
	"github.com/perfagent/subagent/mib/schema"
	"github.com/perfagent/subagent/notiflog"
	"github.com/perfagent/subagent/rtimelan"
	"github.com/perfagent/subagent/spmi"
)

// coverYAML turns on a hotset over the DDS pumps with feed and exception
// rows, derived statistics over them (one per pump, one in all), an
// alarm with rows and a service level objective over every ARM
// transaction; rtime_lan is added when this user may ping.
const coverYAML = `hotset:
  interval: 1s
expressions:
  interval: 1s
derived:
  - {name: pumpload, expr: "sum(DDS/Acme/Pumps/*/load)"}
  - {name: pumpeach, expr: "DDS/Acme/Pumps/*/load * 2"}
alarms:
  - {name: pumpwatch, expr: "DDS/Acme/Pumps/*/load > 80"}
objectives:
  - {name: armall, application: "*", transaction: "*", threshold: 1s, target: 0.99, window: 1h}
hotsets:
  - name: hotpumps
    stat: DDS/Acme/Pumps/*/load
    maxresp: 2
    threshold: 80
    frequency: 5m
    feed_type: always
    excp_type: exception
    severity: 3
`

// The shipped module names exactly every OID the daemon serves with every
// provider active (host, Agent with both front ends, RTime/ARM,
// RTime/LAN, Hotset), in each view, standalone and through snmpd: a
// scalar as descriptor.0, a table cell as column.index. What suppliers
// define (DDS, ARM applications' own metrics) is named exactly by the
// module `subagent mib` writes from that daemon, and where both modules
// have a descriptor they give it the same OID.
func TestShippedModuleNamesEveryServedObject(t *testing.T) {
	mibtest.Require(t, "snmpwalk", "snmptranslate")
	ping := true
	if p, _, err := rtimelan.OpenPinger(nil); err != nil {
		ping = false
		t.Logf("RTime/LAN hosts not covered: this user may open no ICMP socket (%v); the rest is", err)
	} else {
		p.Close()
	}
	for _, views := range []string{"both", "tables", "scalars"} {
		t.Run(views, func(t *testing.T) { coverViews(t, views, ping) })
	}
}

func coverViews(t *testing.T, views string, ping bool) {
	s := snmpdtest.Start(t, snmpdtest.Options{})
	addr := fmt.Sprintf("127.0.0.1:%d", snmpdtest.FreeUDPPort(t))
	e := newEnv(t)
	e.start("--config", populatedConfig(t, "views: "+views+"\n"+coverYAML, ping), "--agentx", s.AgentXAddress, "--listen", addr)
	populate(t, e, ping)

	// The module of this daemon, and what it serves.
	own, text, _, stderr, code := runMIB(t, e, "SUBAGENT-MIB")
	if code != 0 || text == "" {
		t.Fatalf("subagent mib: exit %d: %s", code, stderr)
	}
	served := servedObjects(t, e)
	hosts := []string(nil)
	if ping {
		hosts = []string{"127.0.0.1"}
	}
	writableObjects(served, asn1tree.MustParse(base), map[*schema.WritableTable][]string{schema.HotsetDefTable: {"hotpumps"},
		schema.RTimeLANHostTable: hosts, schema.DerivedDefTable: {"pumpload", "pumpeach"}, schema.AlarmDefTable: {"pumpwatch"}, schema.SLODefTable: {"armall"}})
	outcomeObjects(served, asn1tree.MustParse(base))
	shipped, err := filepath.Abs("../../MIBs/SUBAGENT-MIB.txt")
	if err != nil {
		t.Fatal(err)
	}
	env := mibtest.NetSNMPEnv(t)
	modules := []*module{loadModule(t, shipped), loadModule(t, own)}

	walked := map[string][]string{}
	for _, w := range []struct {
		name string
		c    *snmpdtest.Snmpd
	}{{"standalone", snmpdtest.Target(t, addr, "public")}, {"snmpd", s}} {
		vars, err := w.c.BulkWalk(base, 25)
		if err != nil {
			t.Fatalf("%s walk: %v", w.name, err)
		}
		// The standalone responder's tree ends with ours: snmpbulkwalk
		// prints the endOfMibView after the last OID.
		if n := len(vars); n > 0 && vars[n-1].Type == "endOfMibView" {
			vars = vars[:n-1]
		}
		for _, v := range vars {
			walked[w.name] = append(walked[w.name], v.OID)
		}
		st := checkNames(t, env, modules, served, vars)
		t.Logf("views %s, %s: %d OIDs walked; shipped module names %d exactly (%d of them scalars of instances, "+
			"named through their table cell); subagent mib names the %d supplier- or configuration-defined (DDS %d, ARM metrics %d, derived %d) exactly, and all %d",
			views, w.name, st.walked, st.shipped, st.viaCell, st.supplier, st.dds, st.armMetrics, st.derived, st.own)
		want := []string{"RTime/ARM/procs", "RTime/ARM/Payroll/Lookup/count", "RTime/ARM/Payroll/Lookup/metric1",
			"Agent/arm/rings", "Agent/agentx/connected", "Agent/snmp/inpkts", "Agent/dds/suppliers", "Agent/traps/sent", "Agent/prov/",
			"Hotset/hotpumps/feed/", "Hotset/hotpumps/excp/", "DDS/Acme/Pumps/", "DDS/Zeta/d2/reads",
			"SNMP/hotsetDefTable/hotpumps/", "SNMP/derivedDefTable/pumpeach/", "SNMP/alarmDefTable/pumpwatch/", "Derived/pumpload/value", "Derived/pumpeach/p1/value", "Alarm/1/state", "Agent/expr/pumpwatch/evalus"}
		if ping {
			want = append(want, "RTime/LAN/hosts", "RTime/LAN/127.0.0.1/resptime", "SNMP/rTimeLANHostTable/127.0.0.1/")
		}
		for _, p := range want {
			if st.paths[p] == 0 {
				t.Errorf("views %s, %s: nothing of %s walked", views, w.name, p)
			}
		}
	}
	if a, b := walked["standalone"], walked["snmpd"]; !slices.Equal(a, b) {
		t.Errorf("views %s: the walks differ: %d OIDs standalone, %d through snmpd; only standalone %v, only through snmpd %v",
			views, len(a), len(b), firstMissing(a, b), firstMissing(b, a))
	}
	compareDescriptors(t, modules[0], modules[1])
}

// firstMissing is the first few of a's OIDs that b lacks.
func firstMissing(a, b []string) []string {
	var out []string
	for _, o := range a {
		if !slices.Contains(b, o) && len(out) < 5 {
			out = append(out, o)
		}
	}
	return out
}

// volatileSupplier registers DDS/Zeta with two instances of a volatile
// context (SpmiDdsAddCx), which the daemon serves as a table.
func volatileSupplier(t *testing.T, e *env) {
	t.Helper()
	v := client.NewVendor("Zeta", "Zeta volatile contexts", 9)
	disk := v.Template("disk", "A disk")
	reads := disk.Counter("reads", "Reads", 1, client.Range(0, 100))
	sup, err := client.Start(v, filepath.Join(t.TempDir(), "zeta.shm"), &client.Options{Socket: filepath.Join(e.runDir, "dds.sock")})
	if err != nil {
		t.Fatalf("supplier: %v", err)
	}
	t.Cleanup(func() { sup.Exit() })
	for i, name := range []string{"d1", "d2"} {
		in, err := sup.AddCx(disk, "DDS/Zeta/"+name, "Disk "+name, uint32(10+i))
		if err != nil {
			t.Fatal(err)
		}
		in.Counter(reads).Set(uint64(5 + i))
	}
}

// served is what one OID of the daemon is: a statistic (path), a row's
// name or description column (path of the row), and for a statistic of a
// row in the scalar view the OID of its table cell.
type served struct {
	path     string
	index    string // what follows the object's own OID: "0", or the row's index
	cell     string // scalar view of a row's statistic: its cell
	supplier string // "DDS", "ARM" or "Derived": defined by a supplier or the configuration, not the daemon
}

// servedObjects maps every OID the daemon can serve, in both views, to
// what it is, from its peek listing.
func servedObjects(t *testing.T, e *env) map[string]served {
	t.Helper()
	c, err := consumer.Dial(e.runDir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	entries, err := c.Peek(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	tree, err := mib.FromEntries(entries)
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]*mib.Item{}
	for i := range tree.Items {
		byPath[tree.Items[i].Path] = &tree.Items[i]
	}
	parentOf := func(it *mib.Item) *mib.Item {
		p := strings.TrimSuffix(it.Path, "/")
		return byPath[p[:strings.LastIndexByte(p, '/')+1]]
	}
	isRow := func(it *mib.Item) bool {
		p := parentOf(it)
		return !it.IsStat() && p != nil && p.Rows && !it.Aggregate
	}
	// entryOf is the table entry and index of row r, as docs/TREE.md
	// (Tables) places them.
	entryOf := func(r *mib.Item) (entry, index asn1tree.OID, ok bool) {
		var chain []*mib.Item
		for c := r; c != nil; c = parentOf(c) {
			chain = append([]*mib.Item{c}, chain...)
		}
		var key asn1tree.OID
		for _, c := range chain {
			if isRow(c) {
				index = append(index, c.Rel[len(c.Rel)-1])
			} else {
				key = append(key, c.Rel[len(c.Rel)-1])
			}
		}
		depth := len(index) - 1
		if depth > spmi.MaxTableDepth || len(key) == 0 || key[len(key)-1] == 0 {
			return nil, nil, false
		}
		return tree.Base.Append(spmi.TableEntry(depth, key)...), index, true
	}
	out := map[string]served{}
	for i := range tree.Items {
		it := &tree.Items[i]
		supplier := ""
		if strings.HasPrefix(it.Path, "DDS/") {
			supplier = "DDS"
		} else if strings.HasPrefix(it.Path, "Derived/") && it.Path != "Derived/" {
			supplier = "Derived" // the configuration's derived statistics (docs/EXPRESSIONS.md)
		} else if it.IsStat() && strings.HasPrefix(it.Path, "RTime/ARM/") && strings.Count(it.Path, "/") == 4 && it.Stat.ASN > 20 {
			supplier = "ARM" // an application's own metrics (docs/TREE.md, RTime/ARM)
		}
		if isRow(it) {
			if entry, index, ok := entryOf(it); ok {
				for _, col := range []uint32{spmi.ColName, spmi.ColDescr} {
					out[entry.Append(col).Append(index...).String()] = served{path: it.Path, index: index.String(), supplier: supplier}
				}
			}
		}
		if !it.IsStat() {
			continue
		}
		scalar := served{path: it.Path, index: "0", supplier: supplier}
		if p := parentOf(it); p != nil && isRow(p) {
			if entry, index, ok := entryOf(p); ok && it.Stat.ASN <= ^uint32(0)-spmi.ColumnOffset {
				cell := entry.Append(spmi.ColumnOffset + it.Stat.ASN).Append(index...).String()
				out[cell] = served{path: it.Path, index: index.String(), supplier: supplier}
				scalar.cell = cell
			}
		}
		out[tree.Base.Append(it.Rel...).Append(0).String()] = scalar
	}
	return out
}

// writableObjects adds the cells of the writable tables (base.110,
// schema.WritableTables) for the configured rows of each (hotsets, RTime/LAN
// hosts, derived statistics, alarms), indexed by name, which net-snmp
// shows quoted.
func writableObjects(out map[string]served, base asn1tree.OID, rows map[*schema.WritableTable][]string) {
	for _, tb := range schema.WritableTables() {
		for _, name := range rows[tb] {
			index := asn1tree.OID{uint32(len(name))}
			for i := 0; i < len(name); i++ {
				index = append(index, uint32(name[i]))
			}
			// The columns, StorageType, RowStatus, then those added.
			for col := uint32(2); col <= tb.LastArc(); col++ {
				oid := base.Append(spmi.ASNWritable, tb.Arc, 1, col).Append(index...)
				out[oid.String()] = served{path: "SNMP/" + tb.Name + "/" + name + "/", index: `"` + name + `"`}
			}
		}
	}
}

// outcomeObjects adds the cells of notifLogOutcomeTable (base.111.1),
// one row per notification the log holds: those of NotifLog/entry/.
func outcomeObjects(out map[string]served, base asn1tree.OID) {
	rows := map[uint64]bool{}
	for _, o := range out {
		if rest, ok := strings.CutPrefix(o.path, "NotifLog/entry/"); ok {
			if n, err := strconv.ParseUint(strings.TrimSuffix(rest[:strings.IndexByte(rest+"/", '/')], "/"), 10, 32); err == nil {
				rows[n] = true
			}
		}
	}
	for n := range rows {
		for col := uint32(notiflog.ColOutDelivered); col <= notiflog.ColOutOutcome; col++ {
			oid := base.Append(spmi.ASNNotifLogExt, 1, 1, col, 0, uint32(n))
			out[oid.String()] = served{path: "NotifLog/entry/" + strconv.FormatUint(n, 10) + "/", index: `"".` + strconv.FormatUint(n, 10)}
		}
	}
}

// module is a MIB module file with the structure the check needs.
type module struct {
	file   string
	dirs   []string       // the MIB path that loads it
	leaves map[string]int // OBJECT-TYPE scalars (0) and columns (number of INDEX objects)
}

var (
	objectTypeRE = regexp.MustCompile(`(?ms)^(\w+) OBJECT-TYPE\n(.*?)::= \{ (\w+) \d+ \}`)
	indexRE      = regexp.MustCompile(`INDEX\s+\{([^}]*)\}`)
)

// loadModule reads which OBJECT-TYPEs of file are scalars or columns.
func loadModule(t *testing.T, file string) *module {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	m := &module{file: file, dirs: append(mibtest.BaseDirs(t), filepath.Dir(file)), leaves: map[string]int{}}
	indexes, parent := map[string]int{}, map[string]string{}
	for _, d := range objectTypeRE.FindAllStringSubmatch(string(b), -1) {
		if strings.Contains(d[2], "SEQUENCE OF") {
			continue // a table
		}
		if ix := indexRE.FindStringSubmatch(d[2]); ix != nil {
			indexes[d[1]] = len(strings.Split(ix[1], ","))
			continue // an entry
		}
		if strings.Contains(d[2], "accessible-for-notify") || strings.Contains(d[2], "not-accessible") {
			continue // never served
		}
		parent[d[1]] = d[3]
	}
	for name, p := range parent {
		m.leaves[name] = indexes[p]
	}
	if len(m.leaves) < 100 {
		t.Fatalf("%s: only %d objects found", file, len(m.leaves))
	}
	return m
}

// exact reports whether snmptranslate's name is one of m's objects
// followed by want, the instance suffix and nothing else.
func (m *module) exact(name, want string) bool {
	obj, suffix, ok := strings.Cut(strings.TrimPrefix(name, "SUBAGENT-MIB::"), ".")
	n, leaf := m.leaves[obj]
	if !ok || !leaf || !strings.HasPrefix(name, "SUBAGENT-MIB::") || suffix != want {
		return false
	}
	if n == 0 {
		return want == "0"
	}
	if len(want) > 1 && strings.HasPrefix(want, `"`) && strings.HasSuffix(want, `"`) {
		return n == 1 // one string index, shown quoted: "127.0.0.1"
	}
	return strings.Count(want, ".") == n-1
}

type coverStats struct {
	walked, shipped, viaCell, supplier, dds, armMetrics, derived, own int
	paths                                                             map[string]int // path and its context paths -> OIDs walked
}

// checkNames translates every walked OID with both modules (a
// statistic of a row in the scalar view through its cell) and fails on any
// that its module does not name exactly.
func checkNames(t *testing.T, env []string, mods []*module, objs map[string]served, vars []snmpdtest.Var) coverStats {
	t.Helper()
	st := coverStats{walked: len(vars), paths: map[string]int{}}
	if len(vars) < 200 {
		t.Fatalf("the walk returned %d OIDs", len(vars))
	}
	var asked []string
	var what []served
	for _, v := range vars {
		if v.Type == "noSuchObject" || v.Type == "noSuchInstance" || v.Type == "endOfMibView" {
			t.Errorf("%s: %s in a walk", v.OID, v.Type)
			continue
		}
		o, ok := objs[v.OID]
		if !ok {
			t.Errorf("%s = %s: %s is no object of the daemon's peek", v.OID, v.Value, v.OID)
			continue
		}
		for p := o.path; p != ""; p = p[:strings.LastIndexByte(strings.TrimSuffix(p, "/"), '/')+1] {
			st.paths[p]++
		}
		q := v.OID
		if o.cell != "" {
			q = o.cell
			o.index = objs[q].index
			st.viaCell++
		}
		asked = append(asked, "."+q)
		what = append(what, o)
	}
	names := make([][]string, len(mods))
	for i, m := range mods {
		names[i] = mibtest.Translate(t, env, m.dirs, "SUBAGENT-MIB", nil, asked)
	}
	bad := 0
	for i, o := range what {
		if o.supplier == "" {
			if mods[0].exact(names[0][i], o.index) {
				st.shipped++
			} else if bad++; bad <= 20 {
				t.Errorf("%s (%s) is %s in the shipped module: not one of its objects and the index %s", asked[i], o.path, names[0][i], o.index)
			}
		} else {
			if mods[1].exact(names[1][i], o.index) {
				st.supplier++
				switch o.supplier {
				case "DDS":
					st.dds++
				case "ARM":
					st.armMetrics++
				default:
					st.derived++
				}
			} else if bad++; bad <= 20 {
				t.Errorf("%s (%s, defined by its %s supplier) is %s in the module of subagent mib", asked[i], o.path, o.supplier, names[1][i])
			}
		}
		if mods[1].exact(names[1][i], o.index) {
			st.own++
		} else if bad++; bad <= 20 {
			t.Errorf("%s (%s) is %s in the module of subagent mib", asked[i], o.path, names[1][i])
		}
	}
	if bad > 20 {
		t.Errorf("... %d OIDs not named exactly in all", bad)
	}
	return st
}

// compareDescriptors lists both modules' descriptors (snmptranslate
// -Tz): a descriptor both have must have the same OID in both, and an
// OID both name the same descriptor.
func compareDescriptors(t *testing.T, shipped, own *module) {
	t.Helper()
	env := mibtest.NetSNMPEnv(t)
	list := func(m *module) (map[string]string, map[string]string) {
		out, stderr, err := mibtest.Run(t, env, "snmptranslate", "-M", strings.Join(m.dirs, ":"), "-m", "SUBAGENT-MIB", "-Tz")
		if err != nil || strings.TrimSpace(stderr) != "" {
			t.Fatalf("snmptranslate -Tz %s: %v\n%s", m.file, err, stderr)
		}
		byName, byOID := map[string]string{}, map[string]string{}
		for _, l := range strings.Split(out, "\n") {
			f := strings.Fields(l)
			if len(f) != 2 {
				continue
			}
			name, oid := strings.Trim(f[0], `"`), strings.Trim(f[1], `"`)
			byName[name], byOID[oid] = oid, name
		}
		return byName, byOID
	}
	sName, sOID := list(shipped)
	oName, oOID := list(own)
	var bad []string
	common := 0
	for name, oid := range sName {
		if other, ok := oName[name]; ok {
			common++
			if other != oid {
				bad = append(bad, fmt.Sprintf("%s is %s in the shipped module, %s in subagent mib's", name, oid, other))
			}
		}
	}
	for oid, name := range sOID {
		if other, ok := oOID[oid]; ok && other != name {
			bad = append(bad, fmt.Sprintf("%s is %s in the shipped module, %s in subagent mib's", oid, name, other))
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
	only := 0
	for name := range sName {
		if _, ok := oName[name]; !ok {
			only++
		}
	}
	t.Logf("descriptors: shipped %d, subagent mib %d, both %d (same OIDs), only in the shipped module %d", len(sName), len(oName), common, only)
}

// What counts as named exactly: an object followed by its instance, never
// a node followed by more numbers.
func TestExactNameRules(t *testing.T) {
	m := &module{leaves: map[string]int{"memRealSize": 0, "cpuIdle": 1, "rTimeARMTranCount": 2, "hotsetDefStat": 1}}
	for _, c := range []struct {
		name, index string
		want        bool
	}{
		{"SUBAGENT-MIB::memRealSize.0", "0", true},
		{"SUBAGENT-MIB::cpuIdle.2", "2", true},
		{"SUBAGENT-MIB::rTimeARMTranCount.6.1", "6.1", true},
		{"SUBAGENT-MIB::rTime.1.1.0", "0", false},              // a prefix and numbers
		{"SUBAGENT-MIB::memRealSize.0.1", "0", false},          // more than the instance
		{"SUBAGENT-MIB::cpuIdle.2", "3", false},                // another row
		{"SUBAGENT-MIB::rTimeARMTranCount.6", "6", false},      // one index of two
		{"SUBAGENT-MIB::memRealSize.1", "1", false},            // a scalar as a column
		{"OTHER-MIB::memRealSize.0", "0", false},               // another module
		{".1.3.6.1.4.1.32473.1.13.1.1.0", "0", false},          // no name
		{"SUBAGENT-MIB::subagentSubTables12.13.1", "1", false}, // a node
		{`SUBAGENT-MIB::hotsetDefStat."a.b"`, `"a.b"`, true},   // a string index
		{`SUBAGENT-MIB::rTimeARMTranCount."a.b"`, `"a.b"`, false},
		{`SUBAGENT-MIB::hotsetDefStat."a"`, `"b"`, false},
	} {
		if got := m.exact(c.name, c.index); got != c.want {
			t.Errorf("%s with index %s: exact %v, want %v", c.name, c.index, got, c.want)
		}
	}
}

// populatedConfig writes a configuration of conf, plus RTime/LAN's
// 127.0.0.1 when ping, for populate.
func populatedConfig(t *testing.T, conf string, ping bool) string {
	t.Helper()
	if ping {
		conf += "rtime_lan:\n  interval: 1s\n  timeout: 500ms\n  hosts: [127.0.0.1]\n"
	}
	file := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// populate gives a daemon started with populatedConfig every provider
// with rows and values: a DDS supplier with hot pumps and one with
// volatile instances, an ARM application with metrics and a correlated
// child, RTime/LAN's 127.0.0.1 (when ping), and the hotpumps hotset's
// feed and exception rows.
func populate(t *testing.T, e *env, ping bool) {
	t.Helper()
	sup, loads, _ := pumpSupplier(t, e)
	setLoads(sup, loads, 90, 95, 10)
	volatileSupplier(t, e)
	ag := armAgent(t, e)
	if !ag.Connected() {
		t.Fatalf("the ARM agent did not register\n%s", e.daemonLog)
	}
	tr := ag.App("Payroll", "").Transaction("Lookup", "by name",
		arm.Metric{Field: 1, Type: arm.Gauge32, Name: "queue"}, arm.Metric{Field: 2, Type: arm.Counter32, Name: "bytes"},
		arm.Metric{Field: 7, Type: arm.String32, Name: "user"})
	parent := tr.Start()
	parent.Set(1, 5)
	parent.Set(2, 100)
	parent.SetString("alice")
	child := tr.StartChild(parent.Correlator())
	child.Stop(arm.Good)
	parent.Stop(arm.Good)
	armWait(t, e, "RTime/ARM/Payroll/Lookup/count", "2")
	if ping {
		rtlWait(t, e, "RTime/LAN/127.0.0.1/responses", func(f float64) bool { return f >= 1 })
	}
	waitValue(t, e, "Hotset/hotpumps/groups", "1", 30*time.Second)
	waitValue(t, e, "Alarm/1/state", "firing", 30*time.Second) // a row of alarmTable
	for _, ctx := range []string{"Hotset/hotpumps/feed/", "Hotset/hotpumps/excp/"} {
		if len(e.instances(t, ctx)) == 0 {
			t.Fatalf("no rows under %s", ctx)
		}
	}

}
