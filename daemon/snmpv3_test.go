package daemon

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfagent/subagent/config"
	"github.com/perfagent/subagent/usm"
)

// The engine ID is made once and kept; boots grows by one per start
// saved (loading alone writes nothing: a start refused after it counts
// nothing); a damaged file (also one without its boots, which would
// start again at 1) is refused.
func TestStartEngine(t *testing.T) {
	dir := t.TempDir()
	log := slog.New(slog.DiscardHandler)
	for range 2 {
		if e, err := loadEngine(dir, log); err != nil || e.Boots != 1 {
			t.Fatalf("load without a state file: %+v %v", e, err)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("loadEngine wrote %v", ents)
	}
	startEngine := func(dir string, log *slog.Logger) (usm.Engine, error) {
		e, err := loadEngine(dir, log)
		if err == nil {
			err = saveEngine(dir, e)
		}
		return e, err
	}
	e1, err := startEngine(dir, log)
	id1, b1 := e1.ID, e1.Boots
	if err != nil || b1 != 1 || len(id1) != 17 || !bytes.HasPrefix(id1, []byte{0x80, 0x00, 0x7e, 0xd9, 5}) {
		t.Fatalf("first start: %x %d %v", id1, b1, err)
	}
	e2, err := startEngine(dir, log)
	id2, b2 := e2.ID, e2.Boots
	if err != nil || b2 != 2 || !bytes.Equal(id1, id2) {
		t.Fatalf("second start: %x %d %v", id2, b2, err)
	}
	path := filepath.Join(dir, EngineFile)
	data, _ := os.ReadFile(path)
	if fi, _ := os.Stat(path); !strings.Contains(string(data), "boots 2\n") || fi.Mode().Perm() != 0o600 {
		t.Errorf("state file %q mode %v", data, fi.Mode())
	}
	os.WriteFile(path, []byte("engine_id 80\nboots 3\n"), 0o600)
	if _, err := startEngine(dir, log); err == nil || !strings.Contains(err.Error(), "engine_id") {
		t.Errorf("damaged file: %v", err)
	}
	os.WriteFile(path, []byte("engine_id 80007ed90501\n"), 0o600)
	if _, err := startEngine(dir, log); err == nil || !strings.Contains(err.Error(), "boots") {
		t.Errorf("no boots line: %v", err)
	}
	os.WriteFile(path, []byte("engine_id 80007ed90501\nboots 2147483647\n"), 0o600)
	if e, err := startEngine(dir, log); err != nil || e.Boots != 2147483647 {
		t.Errorf("at the maximum: %d %v", e.Boots, err)
	}
}

// Password files must be private to the daemon's user and hold a long
// enough password; the error names the key.
func TestResponderUsersPasswordFiles(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "p")
	c := &config.Config{SNMP: config.SNMP{Users: []config.SNMPUser{{User: "ops", AuthPasswordFile: f}}}}
	id := []byte{0x80, 0, 0x7e, 0xd9, 5, 1}
	for _, k := range []struct {
		data string
		mode os.FileMode
		want string
	}{
		{"long-enough\n", 0o640, "chmod 600"},
		{"short\n", 0o600, "fewer than 8"},
		{"two\nlines\n", 0o600, "more than one line"},
	} {
		os.Remove(f)
		os.WriteFile(f, []byte(k.data), k.mode)
		os.Chmod(f, k.mode)
		if _, err := responderUsers(c, id); err == nil || !strings.Contains(err.Error(), "snmp.users[0].auth_password_file: ") ||
			!strings.Contains(err.Error(), k.want) {
			t.Errorf("%q %v: %v", k.data, k.mode, err)
		}
	}
	os.Chmod(f, 0o600)
	os.WriteFile(f, []byte("long-enough\n"), 0o600)
	u, err := responderUsers(c, id)
	if err != nil || len(u) != 1 || len(u[0].Keys.AuthKey) != 20 {
		t.Fatalf("%+v %v", u, err)
	}
	added, removed, changed := userChanges(nil, u)
	if len(added) != 1 || removed != nil || changed != nil {
		t.Errorf("changes %v %v %v", added, removed, changed)
	}
}

// The agent's one engine is started (boots counted and written) once per
// start, and only when something needs it: the responder, or a v3 trap
// destination, also one a reload adds; the responder and the traps get
// the same engine. New only loads it: boots are written when Run can no
// longer fail (engine.serve), and a reload while serving writes them at
// once. A v3 destination without the engine's state stops New, naming
// the destination.
func TestEngineStartedOnceWhenNeeded(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	c := fixtureConfig(t)
	c.Listen, c.Traps = "none", nil
	path := filepath.Join(c.StateDir, EngineFile)
	d, err := New(c, log)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.engine.serve(); err != nil { // where Run counts the start
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err == nil {
		t.Fatal("engine state written without the responder or a v3 destination")
	}
	v3 := config.TrapConf{Address: "127.0.0.1:162", Version: "v3", User: "u", AuthProtocol: "SHA256", AuthPassword: "authpass123"}
	n := *c
	n.Traps = []config.TrapConf{v3}
	if err := d.Reload(&n); err != nil {
		t.Fatal(err)
	}
	e1, err := d.engine.get()
	data, _ := os.ReadFile(path)
	if err != nil || e1.Boots != 1 || !strings.Contains(string(data), "boots 1\n") {
		t.Fatalf("after the reload adding a v3 destination: %+v %v, file %q", e1, err, data)
	}
	if err := d.Reload(&n); err != nil {
		t.Fatal(err)
	}
	e2, _ := d.engine.get()
	data, _ = os.ReadFile(path)
	if !bytes.Equal(e1.ID, e2.ID) || e2.Boots != 1 || !e2.Start.Equal(e1.Start) || !strings.Contains(string(data), "boots 1\n") {
		t.Errorf("a second reload started the engine again: %+v, file %q", e2, data)
	}

	// The next start, with the v3 destination configured: loaded in New,
	// written only when Run counts the start.
	c2 := fixtureConfig(t)
	c2.StateDir, c2.Listen, c2.Traps = c.StateDir, "none", []config.TrapConf{v3}
	d2, err := New(c2, log)
	if err != nil {
		t.Fatal(err)
	}
	data, _ = os.ReadFile(path)
	if e, _ := d2.engine.get(); e.Boots != 2 || !bytes.Equal(e.ID, e1.ID) || !strings.Contains(string(data), "boots 1\n") {
		t.Errorf("second start before Run counts it: %+v, file %q; want boots 2 in memory, 1 on disk", e, data)
	}
	if err := d2.engine.serve(); err != nil {
		t.Fatal(err)
	}
	data, _ = os.ReadFile(path)
	if e, _ := d2.engine.get(); e.Boots != 2 || !strings.Contains(string(data), "boots 2\n") {
		t.Errorf("second start counted: %+v, file %q", e, data)
	}

	os.WriteFile(path, []byte("engine_id 80\nboots 3\n"), 0o600)
	c3 := fixtureConfig(t)
	c3.StateDir, c3.Listen, c3.Traps = c.StateDir, "none", []config.TrapConf{v3}
	if _, err := New(c3, log); err == nil || !strings.HasPrefix(err.Error(), "traps[0]: SNMPv3 is sent from the agent's engine") {
		t.Errorf("damaged engine state with a v3 destination: %v", err)
	}
}
