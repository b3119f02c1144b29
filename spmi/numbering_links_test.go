package spmi

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Links planted in the state directory, at the old fixed temp name and at
// the file itself, are never followed: their target stays as it was, and
// a numbering.json that is a link is refused when loading.
func TestNumberingNeverFollowsLinks(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("precious\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "numbering.json")
	for _, n := range []string{"numbering.json.tmp", ".numbering.json.tmp", "numbering.json"} {
		if err := os.Symlink(victim, filepath.Join(dir, n)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := LoadNumbering(file); err == nil || !strings.Contains(err.Error(), "symbolic link") || !strings.Contains(err.Error(), file) {
		t.Fatalf("loading through a link: %v", err)
	}
	n := NewNumbering(file)
	n.Assign("Disk/", "sda", nil)
	if err := n.Save(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
		t.Fatalf("the links' target was overwritten: %q", b)
	}
	fi, err := os.Lstat(file)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 != 0 {
		t.Fatalf("%s: %v %v, want a private regular file", file, fi, err)
	}
	got, err := LoadNumbering(file)
	if err != nil {
		t.Fatal(err)
	}
	if k, ok := got.Lookup("Disk/", "sda"); !ok || k != 1 {
		t.Fatalf("sda: %d %v", k, ok)
	}
}
