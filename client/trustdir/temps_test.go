package trustdir

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The names WriteFile gives its temporary files are recognized, of one
// base or of any, and nothing else is.
func TestTempNames(t *testing.T) {
	dir := t.TempDir()
	made, err := tempName(dir, "numbering.json")
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Base(made)
	for _, c := range []struct {
		name, base string
		want       bool
	}{
		{name, "numbering.json", true},
		{name, "", true},
		{name, "notifications.json", false},
		{"numbering.json.tmp-0123456789abcdef", "", false}, // no leading dot
		{".numbering.json.tmp-0123456789abcde", "", false}, // 15 digits
		{".numbering.json.tmp-0123456789abcdeg", "", false},
		{".tmp-0123456789abcdef", "", false},
	} {
		if got := IsTemp(c.name, c.base); got != c.want {
			t.Errorf("IsTemp(%q, %q) = %v, want %v", c.name, c.base, got, c.want)
		}
	}
	other := filepath.Join(dir, ".notifications.json.tmp-0123456789abcdef")
	os.WriteFile(made, nil, 0o600)
	os.WriteFile(other, nil, 0o600)
	os.Mkdir(filepath.Join(dir, ".x.tmp-0123456789abcdef"), 0o700)
	os.WriteFile(filepath.Join(dir, "numbering.json"), nil, 0o600)
	if got, err := RemoveTemps(dir, "notifications.json"); err != nil || !slices.Equal(got, []string{other}) {
		t.Errorf("RemoveTemps of one base: %v %v", got, err)
	}
	if got, err := RemoveTemps(dir); err != nil || !slices.Equal(got, []string{made}) {
		t.Errorf("RemoveTemps of any base: %v %v, want %s only (a directory is left)", got, err, made)
	}
	left, _ := os.ReadDir(dir)
	if len(left) != 2 {
		t.Errorf("left %v, want numbering.json and the directory", left)
	}
}
