package mib_test

import (
	"bytes"
	"flag"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/arm"
	"github.com/perfagent/subagent/client/armring"
	"github.com/perfagent/subagent/config"
	"github.com/perfagent/subagent/daemon"
	"github.com/perfagent/subagent/dds"
	"github.com/perfagent/subagent/derive"
	"github.com/perfagent/subagent/directory"
	"github.com/perfagent/subagent/expr"
	"github.com/perfagent/subagent/hoststats"
	"github.com/perfagent/subagent/hotset"
	"github.com/perfagent/subagent/mib"
	"github.com/perfagent/subagent/mib/mibtest"
	"github.com/perfagent/subagent/mib/schema"
	"github.com/perfagent/subagent/notiflog"
	"github.com/perfagent/subagent/rtimearm"
	"github.com/perfagent/subagent/rtimearm/armtest"
	"github.com/perfagent/subagent/rtimelan"
	"github.com/perfagent/subagent/slo"
	"github.com/perfagent/subagent/spmi"
)

// update rewrites the shipped module: go test ./mib/ -run TestShippedModuleIsCurrent -args -update
var update = flag.Bool("update", false, "rewrite "+shippedFile+" from the reference tree")

const shippedFile = "../MIBs/" + mib.DefaultModule + ".txt"

// referenceTree is what the shipped module describes: the hoststats
// fixture host (the same on every machine) under the default base, plus
// what the daemon adds with its shipped configuration (Agent, RTime,
// Hotset), so that it names every object a daemon serves (docs/MIB.md,
// Coverage).
func referenceTree(t testing.TB) mib.Tree {
	t.Helper()
	cfg := defaultConfig(t)
	provs, err := hoststats.Providers(hoststats.FixtureConfig("../hoststats"))
	if err != nil {
		t.Fatal(err)
	}
	h := spmi.NewHierarchy(spmi.Config{Base: cfg.Base})
	for _, p := range provs {
		h.Add(p)
	}
	s := h.Refresh()
	if len(s.Failures) > 0 {
		t.Fatalf("the fixture host failed to read: %v", s.Failures)
	}
	tree := mib.FromSnapshot(s)
	tree.Items = append(tree.Items, agentItems(t, cfg)...)
	tree.Items = append(tree.Items, classItems(t, cfg, h)...)
	return tree
}

// classItems adds the classes every daemon has with its shipped
// configuration, whatever the host: RTime/ARM with one application and
// one transaction, RTime/LAN with one host and Hotset with one hotset whose
// feed and exception tables have a row, so that the shipped module
// declares their statistics and tables. They come from the daemon's own
// providers, so a statistic added there is declared here; a fake stands
// in for the network, and only the shapes matter.
func classItems(t testing.TB, cfg *config.Config, host *spmi.Hierarchy) []mib.Item {
	t.Helper()
	reg := armRegistry(t, cfg)
	store, err := rtimelan.OpenStore(nil)
	if err != nil {
		t.Fatal(err)
	}
	set := daemon.RTimeLANSettings(cfg.RTimeLAN)
	set.Hosts = []string{"gw.example.org"}
	mon := rtimelan.NewMonitor(set, store, noNetwork{}, nil, nil)
	eng, err := hotset.New([]hotset.Def{{Name: "queues", GrandParent: "Disk", Stat: "qlen", Threshold: 1, MaxResp: 2,
		Frequency: hotset.MinFrequency, Feed: hotset.FeedAlways, Excp: hotset.ExcpException, Severity: 1, TrapNo: 1}}, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	eng.Evaluate(host.Refresh())
	h := spmi.NewHierarchy(spmi.Config{Base: host.Base()})
	h.Add(reg.Provider()) // before RTime/LAN, as the daemon adds them
	h.Add(rtimelan.Provider{M: mon})
	h.Add(hotset.Provider{E: eng})
	// Derived/ without derived statistics (each one's objects are the
	// host's), and the Alarm table with the row of one alarm.
	cond, err := expr.Parse("count(Disk/*/qlen) >= 0")
	if err != nil {
		t.Fatal(err)
	}
	alarms, err := derive.New(nil, []derive.Alarm{{Name: "queues", X: cond, For: 1, Keep: 1}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	alarms.Evaluate(host.Refresh())
	h.Add(derive.Provider{E: alarms})
	h.Add(derive.AlarmProvider{E: alarms})
	// One service level objective, so that SLO's table is declared.
	h.Add(slo.Provider{S: slo.NewSet([]slo.Objective{{Name: "Objective", Application: "*", Transaction: "*", Threshold: time.Second, Target: 0.99, Window: time.Hour}})})
	// DDS/ without suppliers: every daemon serves the context.
	srv, err := dds.NewServer(dds.ServerConfig{Socket: filepath.Join(t.TempDir(), "dds.sock")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	h.Add(srv.Provider())
	// The notification log with one entry of one VarBind, so that its
	// entry and VarBind tables are declared.
	notes, err := notiflog.Open("", 0, 0, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	notes.Add(0, host.Base().Append(0, 1), []asn1tree.Value{asn1tree.Str("queues")}, []asn1tree.OID{schema.HotsetName.Instance(host.Base())})
	h.Add(notiflog.Provider{L: notes})
	// The directory, of the tree above: described from the second
	// refresh on (it reads the snapshot published before); with one
	// change, so that its change table is declared.
	dir := directory.New(h.Current, nil)
	h.Add(dir.Provider())
	src := dir.Source("Extra")
	src.Change(nil, nil)
	src.Change([]string{"Extra/"}, nil)
	h.Refresh()
	var out []mib.Item
	for _, it := range mib.FromSnapshot(h.Refresh()).Items {
		if strings.HasPrefix(it.Path, "RTime/") || strings.HasPrefix(it.Path, "Hotset/") || strings.HasPrefix(it.Path, "NotifLog/") || it.Path == "DDS/" ||
			strings.HasPrefix(it.Path, "Derived/") || strings.HasPrefix(it.Path, "Alarm/") || strings.HasPrefix(it.Path, "SLO/") ||
			strings.HasPrefix(it.Path, directory.Name+"/") {
			out = append(out, it)
		}
	}
	for _, p := range []string{"RTime/ARM/procs", "RTime/ARM/" + armTemplateApp + "/" + armTemplateTran + "/count", "RTime/LAN/hosts", "Hotset/", "NotifLog/entry/1/var/1/value",
		"SLO/Objective/burn1h", "RTime/Calls/edges", "Directory/generation", "Directory/stat/1/column", "Directory/context/1/rows", "Directory/change/1/path", "DDS/", "Derived/", "Alarm/1/state"} {
		if !slices.ContainsFunc(out, func(it mib.Item) bool { return it.Path == p }) {
			t.Fatalf("the reference tree lacks %s", p)
		}
	}
	return out
}

// The ARM template: an application with one transaction without
// application-defined metrics, whose types (and so columns) each
// application chooses.
const armTemplateApp, armTemplateTran = "Application", "Transaction"

// armRegistry is the daemon's RTime/ARM registry, fed through its real
// server by the Go ARM library with one measured transaction and one of its instances started as its child (a call graph edge).
func armRegistry(t testing.TB, cfg *config.Config) *rtimearm.Registry {
	t.Helper()
	a := cfg.ARM
	reg := rtimearm.NewRegistry(rtimearm.Limits{MaxApps: a.MaxApplications, MaxTrans: a.MaxTransactions, MaxProcs: a.MaxProcesses},
		a.Weight, a.Window, nil, nil)
	d := armtest.Start(t, armtest.Options{Registry: reg,
		Geometry: armring.Geometry{Slots: uint32(a.RingSlots), Apps: uint32(a.ProcessApps), Trans: uint32(a.ProcessTrans)}})
	ag := arm.Open(&arm.Options{Socket: d.Socket, Prog: "reference", Wait: 30 * time.Second})
	t.Cleanup(ag.Close)
	if !ag.Connected() {
		t.Fatal("the ARM library did not register with the server")
	}
	tr := ag.App(armTemplateApp, "").Transaction(armTemplateTran, "")
	h := tr.Start()
	c := tr.StartChild(h.Correlator()) // an edge of RTime/Calls, whose table is then declared
	c.Stop(arm.Good)
	h.Stop(arm.Good)
	path := "RTime/ARM/" + armTemplateApp + "/" + armTemplateTran + "/count"
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		b := spmi.NewBuilder(cfg.Base, nil, time.Now())
		if err := reg.Provider().Collect(b); err != nil {
			t.Fatal(err)
		}
		s := b.Finish()
		if n, err := s.Lookup(path); err == nil && n.Value.Uint64() == 2 {
			return reg
		}
		if time.Now().After(deadline) {
			errs := "none"
			if n, err := s.Lookup("RTime/ARM/errors"); err == nil {
				errs = n.Value.String()
			}
			t.Fatalf("%s did not reach 2 (RTime/ARM/errors %s)", path, errs)
		}
	}
}

// noNetwork is a transport that sends nowhere.
type noNetwork struct{}

func (noNetwork) Has(netip.Addr) bool                               { return true }
func (noNetwork) ID(bool) uint16                                    { return 1 }
func (noNetwork) Send(netip.Addr, uint16, []byte) error             { return nil }
func (noNetwork) Receive(func(bool, []byte, netip.Addr, time.Time)) {}
func (noNetwork) Close() error                                      { return nil }

// defaultConfig is the built-in configuration, whatever SUBAGENT_*
// variables the environment holds.
func defaultConfig(t testing.TB) *config.Config {
	t.Helper()
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "SUBAGENT_") {
			t.Setenv(k, "") // restores the variable after the test
			os.Unsetenv(k)
		}
	}
	cfg, err := config.Load(nil)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// agentItems takes the Agent context from a daemon built on the fixture:
// its statistics and provider instances do not depend on the host.
func agentItems(t testing.TB, cfg *config.Config) []mib.Item {
	t.Helper()
	c := *cfg
	c.Host.ProcRoot = filepath.Join("..", "hoststats", "testdata", "proc")
	c.Host.SysRoot = filepath.Join("..", "hoststats", "testdata", "sys")
	c.StateDir, c.RunDir = t.TempDir(), t.TempDir()
	// One alarm, so that Agent/expr has a row (each expression's).
	c.Alarms = []config.AlarmConf{{Name: "queues", Expr: "count(Disk/*/qlen) >= 0"}}
	d, err := daemon.New(&c, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	// Both front ends, as a daemon runs with them: their statistics exist
	// whatever their values.
	d.AddReferenceStats()
	var out []mib.Item
	for _, it := range mib.FromSnapshot(d.Hierarchy().Refresh()).Items {
		if strings.HasPrefix(it.Path, "Agent/") {
			out = append(out, it)
		}
	}
	if len(out) == 0 {
		t.Fatal("the daemon's tree has no Agent context")
	}
	return out
}

// The shipped module and the reference tree built into the command (which
// `subagent mib` merges with the served tree) are both current.
func TestShippedModuleIsCurrent(t *testing.T) {
	tree := referenceTree(t)
	m, err := mib.Generate(tree, mib.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ref, err := mib.EncodeReference(tree)
	if err != nil {
		t.Fatal(err)
	}
	if *update || os.Getenv("MIB_UPDATE") != "" {
		for f, b := range map[string][]byte{shippedFile: m.Text, mib.ReferenceFile: ref} {
			if err := os.WriteFile(f, b, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("wrote %s", f)
		}
		return
	}
	for f, want := range map[string][]byte{shippedFile: m.Text, mib.ReferenceFile: ref} {
		have, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("%v; generate it with make mib", err)
		}
		if !bytes.Equal(have, want) {
			t.Fatalf("%s is stale (%s); regenerate it with make mib", f, firstDiff(have, want))
		}
	}
}

// firstDiff names the first line where two texts differ.
func firstDiff(a, b []byte) string { return mibtest.FirstDiff(a, b, "file has", "generator writes") }

// The checked-in file, as a user loads it from MIBs/.
func TestShippedModuleWithTheTools(t *testing.T) {
	mibtest.Require(t, "smilint", "snmptranslate")
	tree := referenceTree(t)
	m := generate(t, tree, mib.Options{})
	file, err := filepath.Abs(shippedFile)
	if err != nil {
		t.Fatal(err)
	}
	checkWithTools(t, file, append(mibtest.BaseDirs(t), filepath.Dir(file)), m, tree)
}

// What a running daemon's peek gives must make the same module as its
// snapshot, on the reference tree with its fixed contexts among instances.
func TestPeekOfTheReferenceTreeGivesTheSameModule(t *testing.T) {
	provs, err := hoststats.Providers(hoststats.FixtureConfig("../hoststats"))
	if err != nil {
		t.Fatal(err)
	}
	h := spmi.NewHierarchy(spmi.Config{Base: testBase})
	for _, p := range provs {
		h.Add(p)
	}
	sameFromPeek(t, h.Refresh())
}

func sameFromPeek(t *testing.T, s *spmi.Snapshot) {
	t.Helper()
	entries, err := spmi.Peek(s, "")
	if err != nil {
		t.Fatal(err)
	}
	tree, err := mib.FromEntries(entries)
	if err != nil {
		t.Fatal(err)
	}
	a, b := generate(t, mib.FromSnapshot(s), mib.Options{}), generate(t, tree, mib.Options{})
	if !bytes.Equal(a.Text, b.Text) {
		t.Fatalf("module from the peek differs: %s", firstDiff(a.Text, b.Text))
	}
}

// This machine's own tree, with its processes, interfaces and disks.
func TestLiveHostModuleWithTheTools(t *testing.T) {
	mibtest.Require(t, "smilint", "snmptranslate")
	cfg, err := config.Load(nil)
	if err != nil {
		t.Fatal(err)
	}
	h, _, err := daemon.NewHierarchy(cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := h.Refresh()
	sameFromPeek(t, s)
	tree := mib.FromSnapshot(s)
	m := generate(t, tree, mib.Options{})
	file, dirs := writeModule(t, m)
	checkWithTools(t, file, dirs, m, tree)
}
