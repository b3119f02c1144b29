package hoststats

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/perfagent/subagent/client/spmiwire"
)

func TestFSName(t *testing.T) {
	for mp, want := range map[string]string{
		"/":               "root",
		"/var/log":        "var_log",
		"/boot/efi":       "boot_efi",
		"/srv/backup set": "srv_backup_set",
		"/mnt/tab\there":  "mnt_tab_here",
		"/data/":          "data",
	} {
		if got := fsName(mp); got != want {
			t.Errorf("fsName(%q) = %q, want %q", mp, got, want)
		}
	}
	if got := swapName("/var/swap/swap file"); got != "swap_file" {
		t.Errorf("swapName = %q", got)
	}
}

func TestUniqueNamesCollisions(t *testing.T) {
	keys := []string{"/var_log", "/root", "/var/log", "/"}
	got := uniqueNames(keys, fsName)
	// "/" (shorter than "/root") keeps "root"; "/var/log" keeps "var_log"
	// (same length as "/var_log", and "/" sorts before "_").
	if got[3] != "root" || got[2] != "var_log" {
		t.Fatalf("names %q", got)
	}
	for _, i := range []int{0, 1} {
		want := fsName(keys[i]) + "~"
		if !strings.HasPrefix(got[i], want) || len(got[i]) != len(want)+8 {
			t.Errorf("%s named %q, want %q and 8 hex digits", keys[i], got[i], want)
		}
	}
	// The result depends on the set of keys, not on their order.
	rev := slices.Clone(keys)
	slices.Reverse(rev)
	back := uniqueNames(rev, fsName)
	slices.Reverse(back)
	if !slices.Equal(got, back) {
		t.Errorf("order changes names: %q vs %q", got, back)
	}
	seen := map[string]bool{}
	for _, n := range got {
		if seen[n] {
			t.Errorf("duplicate name %q in %q", n, got)
		}
		seen[n] = true
	}
}

func TestUniqueNamesLong(t *testing.T) {
	a := "/var/lib/kubelet/pods/0a1b2c3d-4e5f/volumes/kubernetes.io~projected/kube-api-access-1"
	b := strings.TrimSuffix(a, "1") + "2"
	got := uniqueNames([]string{a, b, "/äöü/" + strings.Repeat("é", 20)}, fsName)
	if got[0] == got[1] {
		t.Errorf("long names that differ at the end collide: %q", got[0])
	}
	for _, n := range got {
		if len(n) > spmiwire.MaxName || !utf8.ValidString(n) || !strings.Contains(n, "~") {
			t.Errorf("long name %q: %d bytes, valid UTF-8 %v", n, len(n), utf8.ValidString(n))
		}
	}
	if again := uniqueNames([]string{a}, fsName); again[0] != got[0] {
		t.Errorf("hashed name not deterministic: %q vs %q", again[0], got[0])
	}
}

func TestUnescapeOctal(t *testing.T) {
	for in, want := range map[string]string{
		`/srv/backup\040set`: "/srv/backup set",
		`/a\011b\012c`:       "/a\tb\nc",
		`/back\134slash`:     `/back\slash`,
		`/not\9escape`:       `/not\9escape`,
		`/short\04`:          `/short\04`,
		`/plain`:             "/plain",
	} {
		if got := unescapeOctal(in); got != want {
			t.Errorf("unescapeOctal(%q) = %q, want %q", in, got, want)
		}
	}
}
