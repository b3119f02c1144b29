package hoststats

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/perfagent/subagent/spmi"
)

var allocated = []string{"PagSp/", "Disk/", "FS/"}

// Allocated numbers are the same for a new daemon (new providers) that
// loads the saved numbering.
func TestAllocatedNumbersStable(t *testing.T) {
	file := filepath.Join(t.TempDir(), "numbering.json")
	num := spmi.NewNumbering(file)
	first := build(t, providers(t, FixtureConfig(fixtureRoot(t))), num)
	if err := num.Save(); err != nil {
		t.Fatal(err)
	}
	again := build(t, providers(t, FixtureConfig(fixtureRoot(t))), num)
	loaded, err := spmi.LoadNumbering(file)
	if err != nil {
		t.Fatal(err)
	}
	restarted := build(t, providers(t, FixtureConfig(fixtureRoot(t))), loaded)
	for _, cx := range allocated {
		a, b, c := instances(t, first, cx), instances(t, again, cx), instances(t, restarted, cx)
		if len(a) == 0 || !maps.Equal(a, b) || !maps.Equal(a, c) {
			t.Errorf("%s numbered %v, then %v, after a restart %v", cx, a, b, c)
		}
	}
}

// A disk (or file system) that goes away keeps its number; a new one gets
// a number never used before.
func TestVanishedNumberNotReused(t *testing.T) {
	root := copyFixture(t)
	cfg := FixtureConfig(root)
	num := spmi.NewNumbering("")
	before := build(t, providers(t, cfg), num)
	disks, fss := instances(t, before, "Disk/"), instances(t, before, "FS/")

	// sdb is replaced by sdc, /home by /data.
	replace(t, filepath.Join(cfg.ProcRoot, "diskstats"), " sdb", " sdc")
	if err := os.Rename(filepath.Join(cfg.SysRoot, "block", "sdb"), filepath.Join(cfg.SysRoot, "block", "sdc")); err != nil {
		t.Fatal(err)
	}
	replace(t, filepath.Join(cfg.ProcRoot, "4242", "mountinfo"), " /home ", " /data ")
	cfg.Statfs = func(path string, st *unix.Statfs_t) error {
		if path == "/data" {
			path = "/home"
		}
		return FixtureStatfs(path, st)
	}
	after := build(t, providers(t, cfg), num)
	absent(t, after, "Disk/sdb/")
	absent(t, after, "FS/home/")
	if got := node(t, after, "Disk/sda/").ASN; got != disks["sda"] {
		t.Errorf("sda renumbered %d -> %d", disks["sda"], got)
	}
	if got := node(t, after, "Disk/sdc/").ASN; got == disks["sdb"] || got == disks["sda"] {
		t.Errorf("new disk sdc got number %d, used before by %v", got, disks)
	}
	if got := node(t, after, "FS/data/").ASN; got == fss["home"] {
		t.Errorf("new file system /data got the number %d of /home", got)
	}
	if k, ok := num.Lookup("Disk", "sdb"); !ok || k != disks["sdb"] {
		t.Errorf("numbering forgot sdb (%d %v)", k, ok)
	}
}

func replace(t *testing.T, file, old, new string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		t.Fatalf("%s has no %q", file, old)
	}
	if err := os.WriteFile(file, []byte(strings.ReplaceAll(string(b), old, new)), 0o644); err != nil {
		t.Fatal(err)
	}
}
