package rtimelan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestStoreKeepsNumbersAcrossSaves(t *testing.T) {
	file := filepath.Join(t.TempDir(), "state", StoreFile)
	s, err := LoadStore(file)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := s.Number("a")
	b, _ := s.Number("b")
	if a != FirstHostASN || b != FirstHostASN+1 {
		t.Fatalf("numbers %d %d, want %d %d", a, b, FirstHostASN, FirstHostASN+1)
	}
	s.SetReferenced("b", true)
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}
	r, err := LoadStore(file)
	if err != nil {
		t.Fatal(err)
	}
	if k, changed := r.Number("b"); k != b || changed {
		t.Errorf("b after reload: %d (changed %v), want %d", k, changed, b)
	}
	// A removed name keeps its number; a new name gets a new one.
	r.SetReferenced("b", false)
	if c, _ := r.Number("c"); c != FirstHostASN+2 {
		t.Errorf("c got %d, want %d", c, FirstHostASN+2)
	}
	if r.IsReferenced("b") || !s.IsReferenced("b") {
		t.Error("referenced flags wrong")
	}
	if _, err := os.Stat(file + ".tmp"); !os.IsNotExist(err) {
		t.Errorf("temporary file left: %v", err)
	}
}

func TestStoreRefusesDamagedFiles(t *testing.T) {
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
		if _, err := LoadStore(file); err == nil || !strings.Contains(err.Error(), file) {
			t.Errorf("%s: %v, want an error naming %s", name, err, file)
		}
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
