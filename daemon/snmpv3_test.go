package daemon

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfagent/subagent/config"
)

// The engine ID is made once and kept; boots grows by one per start and
// is on disk when startEngine returns; a damaged file (also one without
// its boots, which would start again at 1) is refused.
func TestStartEngine(t *testing.T) {
	dir := t.TempDir()
	log := slog.New(slog.DiscardHandler)
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
		if _, err := ResponderUsers(c, id); err == nil || !strings.Contains(err.Error(), "snmp.users[0].auth_password_file: ") ||
			!strings.Contains(err.Error(), k.want) {
			t.Errorf("%q %v: %v", k.data, k.mode, err)
		}
	}
	os.Chmod(f, 0o600)
	os.WriteFile(f, []byte("long-enough\n"), 0o600)
	u, err := ResponderUsers(c, id)
	if err != nil || len(u) != 1 || len(u[0].Keys.AuthKey) != 20 {
		t.Fatalf("%+v %v", u, err)
	}
	added, removed, changed := UserChanges(nil, u)
	if len(added) != 1 || removed != nil || changed != nil {
		t.Errorf("changes %v %v %v", added, removed, changed)
	}
}
