package rtimelan

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfagent/subagent/spmi"
)

func TestStoreKeepsNumbersAcrossSaves(t *testing.T) {
	file := filepath.Join(t.TempDir(), "state", "numbering.json")
	s, err := OpenStore(spmi.NewNumbering(file))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := s.Number("a")
	b, _ := s.Number("b")
	if a != FirstHostASN || b != FirstHostASN+1 {
		t.Fatalf("numbers %d %d, want %d %d", a, b, FirstHostASN, FirstHostASN+1)
	}
	if _, ok := s.Lookup("c"); ok {
		t.Fatal("a lookup of a new name gave it a number")
	}
	s.SetReferenced("b", true)
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}
	num, err := spmi.LoadNumbering(file)
	if err != nil {
		t.Fatal(err)
	}
	r, err := OpenStore(num)
	if err != nil {
		t.Fatal(err)
	}
	if k, err := r.Number("b"); k != b || err != nil {
		t.Errorf("b after reload: %d (%v), want %d", k, err, b)
	}
	// A removed name keeps its number; a new name gets a new one, and
	// "c", only looked up before, was never numbered.
	r.SetReferenced("b", false)
	if c, _ := r.Number("c"); c != FirstHostASN+2 {
		t.Errorf("c got %d, want %d", c, FirstHostASN+2)
	}
	if r.IsReferenced("b") || !s.IsReferenced("b") {
		t.Error("referenced flags wrong")
	}
}

// The numbers and the referenced hosts of numbering.json are checked as
// rtimelan.json's were: a bad one turns RTime/LAN off, naming the file.
func TestStoreRefusesBadState(t *testing.T) {
	low := spmi.NewNumbering("/state/numbering.json")
	low.Put(Path, "a", 3)
	bad := spmi.NewNumbering("/state/numbering.json")
	bad.Put(Path, "a b", 16)
	bad.Mark(Path, referenced, "a b", true)
	for name, num := range map[string]*spmi.Numbering{"number too low": low, "bad referenced": bad} {
		if _, err := OpenStore(num); err == nil || !strings.Contains(err.Error(), "/state/numbering.json") {
			t.Errorf("%s: %v, want an error naming the file", name, err)
		}
	}
}

func TestOldStoreRefusesDamagedFiles(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"not json":        "{",
		"version 2":       `{"version":2}`,
		"shared number":   `{"version":1,"numbers":{"a":16,"b":16}}`,
		"number too low":  `{"version":1,"numbers":{"a":3}}`,
		"bad referenced":  `{"version":1,"referenced":["a b"]}`,
		"long referenced": `{"version":1,"referenced":["` + strings.Repeat("x", 40) + `"]}`,
	} {
		file := filepath.Join(dir, strings.ReplaceAll(name, " ", "_"))
		os.WriteFile(file, []byte(body), 0o644)
		if _, err := LoadOldStore(file); err == nil || !strings.Contains(err.Error(), file) {
			t.Errorf("%s: %v, want an error naming %s", name, err, file)
		}
	}
	if _, err := LoadOldStore(filepath.Join(dir, StoreFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want fs.ErrNotExist", err)
	}
}

// A store written when addresses were kept as typed is migrated with
// their canonical spelling and the same numbers.
func TestOldStoreMigratesAddressSpellings(t *testing.T) {
	file := filepath.Join(t.TempDir(), StoreFile)
	old := map[string]any{"version": 1, "numbers": map[string]uint32{"0::1": 16, "farvel": 17, "::ffff:10.0.0.1": 18, "10.0.0.1": 19},
		"referenced": []string{"0::1", "farvel"}}
	b, _ := json.Marshal(old)
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	num, err := LoadOldStore(file)
	if err != nil {
		t.Fatal(err)
	}
	s, err := OpenStore(num)
	if err != nil {
		t.Fatal(err)
	}
	got := num.Names(Path)
	if got["::1"] != 16 || got["farvel"] != 17 || got["10.0.0.1"] != 19 || len(got) != 4 {
		t.Errorf("numbers %v", got)
	}
	if got["::ffff:10.0.0.1"] != 18 {
		t.Errorf("the number of a spelling whose canonical form has its own is no longer reserved: %v", got)
	}
	if strings.Join(s.Referenced(), " ") != "::1 farvel" {
		t.Errorf("referenced %v", s.Referenced())
	}
	if k, err := s.Number("::1"); k != 16 || err != nil {
		t.Errorf("::1 is %d (%v), want 16", k, err)
	}
}

// A full numbering refuses a new host by reference with an error naming
// the setting, and keeps measuring the others.
func TestCreateBeyondTheNumberingCap(t *testing.T) {
	num := spmi.NewNumbering("")
	num.SetMaxNames(2)
	s, _ := OpenStore(num)
	m := NewMonitor(settings("gw"), s, newFakeNet(t), nil, nil)
	if ok, err := m.Create("a"); !ok || err != nil {
		t.Fatalf("create a: %v %v", ok, err)
	}
	if _, err := m.Create("b"); !errors.Is(err, spmi.ErrNumberingFull) || !strings.Contains(err.Error(), "state.max_names_per_context") {
		t.Fatalf("create b beyond the cap: %v", err)
	}
	if s.IsReferenced("b") || strings.Join(m.Hosts(), " ") != "gw a" {
		t.Errorf("hosts %v, referenced %v", m.Hosts(), s.Referenced())
	}
}
func TestHostNames(t *testing.T) {
	for _, ok := range []string{"farvel", "gw-1.example.org", "10.0.0.1", "::1", "fe80::1%eth0", "a_b"} {
		if err := CheckHost(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "a b", "a/b", "a..b", "-/", strings.Repeat("a", 64) + ".org", strings.Repeat("a.", 130)} {
		if err := CheckHost(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	long := "host-with-a-long-name.datacenter.example.org"
	n := InstanceName(long)
	if len(n) != maxName || !strings.HasPrefix(n, long[:26]+"~") {
		t.Errorf("instance name of %q: %q", long, n)
	}
	if InstanceName(long+"x") == n {
		t.Error("two long names that start alike share an instance name")
	}
	if InstanceName("farvel") != "farvel" {
		t.Error("short names change")
	}
}
