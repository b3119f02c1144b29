package daemon

import (
	"errors"
	"log/slog"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/config"
)

func TestReloadAppliesAllOrNothing(t *testing.T) {
	d := &Daemon{log: slog.New(slog.DiscardHandler)}
	var applied []string
	refuse := false
	d.addReloader(Reloader{Name: "a", Check: func(*config.Config) error { return nil },
		Apply: func(*config.Config) error { applied = append(applied, "a"); return nil }})
	d.addReloader(Reloader{Name: "b", Check: func(*config.Config) error {
		if refuse {
			return errors.New("bad interval")
		}
		return nil
	}, Apply: func(*config.Config) error { applied = append(applied, "b"); return nil }})

	c := fixtureConfig(t)
	refuse = true
	err := d.Reload(c)
	if err == nil || !strings.Contains(err.Error(), "b: bad interval") {
		t.Fatalf("Reload with a refusing part: %v, want an error naming b", err)
	}
	if len(applied) != 0 {
		t.Fatalf("a refused reload applied %v", applied)
	}
	refuse = false
	// What a domain package refuses (Check) is refused before any part.
	bad := *c
	bad.AgentX = "udp:127.0.0.1:705"
	if err := d.Reload(&bad); err == nil || !strings.Contains(err.Error(), "configuration: agentx: ") {
		t.Fatalf("Reload of a configuration Check refuses: %v, want an error naming agentx", err)
	}
	if len(applied) != 0 {
		t.Fatalf("a refused reload applied %v", applied)
	}
	if err := d.Reload(c); err != nil {
		t.Fatal(err)
	}
	if strings.Join(applied, ",") != "a,b" {
		t.Fatalf("applied %v, want a,b", applied)
	}
}

func TestChangedKeys(t *testing.T) {
	a := rtlConfig(t)
	a.Traps = []config.TrapConf{{Address: "127.0.0.1:162", Version: "v2c", Community: "c"}}
	if got := changedKeys(a, a); len(got) != 0 {
		t.Fatalf("a config against itself: %v", got)
	}
	b := *a
	b.Listen = "127.0.0.1:2161"
	b.SNMP.Community = "other"
	b.AgentXSession.Timeout++
	b.DDS.MaxArea += 8 // squashed into dds
	b.Host.Disabled = []string{"Proc"}
	b.Traps = []config.TrapConf{a.Traps[0]}
	b.Traps[0].AuthPassword = "secret12"
	b.Base = nil // computed from base_oid: not a key
	want := "listen snmp.community agentx_session.timeout host.disabled dds.max_area traps[0].auth_password"
	if got := strings.Join(changedKeys(a, &b), " "); got != want {
		t.Errorf("changed keys:\n got %s\nwant %s", got, want)
	}
	b = *a
	b.Traps = append(b.Traps, b.Traps[0])
	b.ARM.AllowUIDs = []int{} // empty as good as none
	if got := strings.Join(changedKeys(a, &b), " "); got != "traps" {
		t.Errorf("one more trap destination: changed %q, want traps", got)
	}
}

// Every entry of the reloadable table names a key of the configuration:
// a misspelt one would silently turn a reloadable setting into a WARN.
func TestReloadableKeysExist(t *testing.T) {
	keys := map[string]bool{}
	var walk func(prefix string, typ reflect.Type)
	walk = func(prefix string, typ reflect.Type) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("mapstructure"), ",")
			switch {
			case name == "-":
			case opts == "squash":
				walk(prefix, f.Type)
			default:
				keys[prefix+name] = true
				if f.Type.Kind() == reflect.Struct && f.Type.PkgPath() == typ.PkgPath() {
					walk(prefix+name+".", f.Type)
				}
			}
		}
	}
	walk("", reflect.TypeOf(config.Config{}))
	if !keys["dds.max_area"] || !keys["snmp.community"] {
		t.Fatalf("the walk missed keys: %v", keys)
	}
	for _, r := range reloadable {
		if !keys[r.key] {
			t.Errorf("reloadable key %q is not a configuration key", r.key)
		}
	}
}

// A reload applies what it can and names, in one WARN, every changed key
// that needs a restart, on every reload until the daemon restarts.
func TestReloadNamesKeysNeedingRestart(t *testing.T) {
	c := rtlConfig(t)
	// No run directory: New makes a private one, which is no change of
	// run_dir or dds.socket to a reload of the same file.
	c.RunDir, c.DDS.Socket = "", ""
	t.Setenv("TMPDIR", t.TempDir()) // where New makes it: never the shared /tmp
	loaded := *c
	logs := &testutil.Buffer{}
	d, err := New(c, slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d.cfg.RunDir) })
	if d.cfg.RunDir == "" || !strings.HasPrefix(d.cfg.RunDir, os.Getenv("TMPDIR")+"/") {
		t.Fatalf("New made no private run directory in $TMPDIR: %q", d.cfg.RunDir)
	}
	c = &loaded
	var community string
	d.addReloader(Reloader{Name: PartResponder, Apply: func(c *config.Config) error { community = c.SNMP.Community; return nil }})
	const warn = `level=WARN msg="reload: these settings need a restart to take effect"`

	n := *c
	n.SNMP.Community = "fresh"
	n.Listen = "127.0.0.1:2161"
	n.AgentXSession.Priority = 12
	n.ARM.Weight = 10 // arm is not running in this test: nothing to apply
	if err := d.Reload(&n); err != nil {
		t.Fatal(err)
	}
	if community != "fresh" {
		t.Errorf("responder got community %q", community)
	}
	if got := linesWith(logs.String(), warn); len(got) != 1 || !strings.HasSuffix(got[0], " keys=listen,agentx_session.priority") {
		t.Errorf("want one WARN naming listen and agentx_session.priority:\n%s", logs)
	}
	if got := linesWith(logs.String(), `msg=reloaded`); len(got) != 1 || !strings.Contains(got[0], "changed=snmp.community unused=arm.weight") ||
		!strings.Contains(got[0], "parts=rtime_lan,hotsets,expressions,objectives,responder") {
		t.Errorf("want the INFO naming the parts and the applied key:\n%s", logs)
	}

	// Still not in effect: said again. Nothing reloadable changed.
	if err := d.Reload(&n); err != nil {
		t.Fatal(err)
	}
	if got := linesWith(logs.String(), warn); len(got) != 2 {
		t.Errorf("the second reload did not repeat the WARN:\n%s", logs)
	}
	if got := linesWith(logs.String(), `msg=reloaded`); len(got) != 2 || !strings.HasSuffix(got[1], `changed=""`) {
		t.Errorf("the second reload changed something:\n%s", logs)
	}

	// Back to the running settings: no WARN.
	back := *c
	if err := d.Reload(&back); err != nil {
		t.Fatal(err)
	}
	if got := linesWith(logs.String(), warn); len(got) != 2 || community != c.SNMP.Community {
		t.Errorf("reloading the running settings: community %q\n%s", community, logs)
	}
}

// linesWith returns the lines of s that contain sub.
func linesWith(s, sub string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return out
}

// A part that cannot apply what it checked says so: its changed keys are
// named as not applied, never as changed, and Reload returns its error.
func TestReloadNamesKeysAPartCouldNotApply(t *testing.T) {
	logs := &testutil.Buffer{}
	d := &Daemon{log: slog.New(slog.NewTextHandler(logs, nil))}
	c := fixtureConfig(t)
	d.cfg = c
	d.addReloader(Reloader{Name: PartResponder, Apply: func(*config.Config) error { return errors.New("port busy") }})
	d.addReloader(Reloader{Name: PartLog, Apply: func(*config.Config) error { return nil }})
	n := *c
	n.SNMP.Community = "fresh"
	n.Log.Level = "debug"
	err := d.Reload(&n)
	if err == nil || !strings.Contains(err.Error(), "responder: port busy") {
		t.Fatalf("Reload: %v, want the responder's error", err)
	}
	if got := linesWith(logs.String(), "msg=reloaded"); len(got) != 1 || !strings.Contains(got[0], "changed=log.level") || strings.Contains(got[0], "snmp.community") {
		t.Errorf("want the INFO naming log.level alone as changed:\n%s", logs)
	}
	if got := linesWith(logs.String(), `msg="reload: settings not applied"`); len(got) != 1 || !strings.Contains(got[0], "keys=snmp.community") {
		t.Errorf("want one ERROR naming snmp.community as not applied:\n%s", logs)
	}
}
