package hoststats

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/perfagent/subagent/spmi"
)

// statsOf reports, per top-level context, how many statistics have a
// value and how many have none.
func statsOf(s *spmi.Snapshot) (withValue, without map[string]int) {
	withValue, without = map[string]int{}, map[string]int{}
	for _, top := range s.Top.Children {
		spmi.Walk(top, func(n *spmi.Node) bool {
			if n.IsStat() {
				if n.Value.OK() {
					withValue[top.Name]++
				} else {
					without[top.Name]++
				}
			}
			return true
		})
	}
	return withValue, without
}

// A damaged diskstats fails Disk only: its instances stay, as read last,
// without values, and every other context keeps its values.
func TestCorruptDiskstatsFailsOnlyDisk(t *testing.T) {
	root := copyFixture(t)
	cfg := FixtureConfig(root)
	ps := providers(t, cfg)
	num := spmi.NewNumbering("")
	before := build(t, ps, num)
	sda := node(t, before, "Disk/sda/").ASN

	src := filepath.Join(cfg.ProcRoot, "diskstats")
	if err := os.WriteFile(src, []byte("   8       0 sda 12 x7 garbage\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := build(t, ps, num)
	if _, ok := s.Failures[src]; !ok || len(s.Failures) != 1 {
		t.Fatalf("failures %v, want exactly %s", s.Failures, src)
	}
	if n := node(t, s, "Disk/sda/"); n.ASN != sda {
		t.Errorf("Disk/sda renumbered %d -> %d", sda, n.ASN)
	}
	for _, st := range diskStats {
		wantNoValue(t, s, "Disk/sda/"+st.Name)
		wantNoValue(t, s, "Disk/sdb/"+st.Name)
	}
	_, baseline := statsOf(before)
	with, without := statsOf(s)
	for _, name := range Names() {
		switch {
		case name == "Disk" && with[name] != 0:
			t.Errorf("Disk has %d statistics with values", with[name])
		case name != "Disk" && without[name] != baseline[name]:
			t.Errorf("%s: %d statistics without value, %d before", name, without[name], baseline[name])
		}
	}
	wantUint(t, s, "CPU/cpu0/idle", 8765432)
	wantUint(t, s, "Mem/Real/size", 16303428)
}

// Each source, when missing, takes away the values of the contexts that
// read it and of no other (LAN/*/speed of wlan0 and FS/boot_efi/%iused
// have no value in the intact fixture either).
func TestMissingSourceFailsOnlyItsContexts(t *testing.T) {
	intact := fixtureSnapshot(t)
	valued, baseline := statsOf(intact)
	for _, tc := range []struct {
		file     string // under testdata/proc
		contexts []string
	}{
		{"stat", []string{"CPU", "Proc"}},
		{"meminfo", []string{"Mem"}},
		{"vmstat", []string{"Mem"}},
		{"swaps", []string{"PagSp"}},
		{"diskstats", []string{"Disk"}},
		{"4242/net/dev", []string{"LAN"}},
		{"4242/net/snmp", []string{"IP", "TCP", "UDP", "ICMP"}},
		{"loadavg", []string{"Proc"}},
		{"4242/mountinfo", []string{"FS"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			root := copyFixture(t)
			cfg := FixtureConfig(root)
			src := filepath.Join(cfg.ProcRoot, tc.file)
			if err := os.Remove(src); err != nil {
				t.Fatal(err)
			}
			s := build(t, providers(t, cfg), nil)
			if len(s.Failures) == 0 {
				t.Fatal("no failure recorded")
			}
			for f := range s.Failures {
				if filepath.Base(f) != filepath.Base(tc.file) {
					t.Errorf("failure of %s recorded, want only %s", f, tc.file)
				}
			}
			with, without := statsOf(s)
			for _, name := range Names() {
				hit := slices.Contains(tc.contexts, name)
				if !hit && without[name] != baseline[name] {
					t.Errorf("%s: %d statistics without value, %d when intact", name, without[name], baseline[name])
				}
				if hit && with[name] >= valued[name] {
					t.Errorf("%s kept all its values (%d) without its source", name, with[name])
				}
			}
		})
	}
}

// A process listed in /proc whose stat is gone (it exited) is left out
// without an error.
func TestVanishedProcessIsLeftOut(t *testing.T) {
	root := copyFixture(t)
	cfg := FixtureConfig(root)
	if err := os.Remove(filepath.Join(cfg.ProcRoot, "2210", "stat")); err != nil {
		t.Fatal(err)
	}
	s := build(t, providers(t, cfg), nil)
	if len(s.Failures) != 0 {
		t.Errorf("failures %v", s.Failures)
	}
	absent(t, s, "Proc/pid/2210/")
	wantUint(t, s, "Proc/nprocs", 5)
	wantText(t, s, "Proc/pid/1187/name", "java")
}

// An interface without an ifindex has no number: it is left out and the
// failure is recorded.
func TestInterfaceWithoutIfindex(t *testing.T) {
	root := copyFixture(t)
	cfg := FixtureConfig(root)
	dir := filepath.Join(cfg.SysRoot, "class", "net", "wlan0")
	if err := os.Remove(filepath.Join(dir, "ifindex")); err != nil {
		t.Fatal(err)
	}
	s := build(t, providers(t, cfg), nil)
	if _, ok := s.Failures[dir]; !ok {
		t.Errorf("failures %v, want %s", s.Failures, dir)
	}
	absent(t, s, "LAN/wlan0/")
	wantUint(t, s, "LAN/eth0/mtu", 1500)
}

// Instance lists of every kind survive a failed read with their numbers.
func TestInstancesKeptWhileSourceFails(t *testing.T) {
	root := copyFixture(t)
	cfg := FixtureConfig(root)
	ps := providers(t, cfg)
	num := spmi.NewNumbering("")
	before := build(t, ps, num)
	for _, f := range []string{"stat", "swaps", "diskstats", "4242/net/dev", "4242/mountinfo"} {
		if err := os.Rename(filepath.Join(cfg.ProcRoot, f), filepath.Join(cfg.ProcRoot, f+".away")); err != nil {
			t.Fatal(err)
		}
	}
	after := build(t, ps, num)
	for _, path := range []string{"CPU/", "PagSp/", "Disk/", "LAN/", "FS/"} {
		b, a := instances(t, before, path), instances(t, after, path)
		if len(b) == 0 || !maps.Equal(a, b) {
			t.Errorf("%s instances %v after the failure, %v before", path, a, b)
		}
	}
	wantNoValue(t, after, "CPU/cpu3/idle")
	wantNoValue(t, after, "CPU/total/idle")
	wantNoValue(t, after, "PagSp/size")
	wantNoValue(t, after, "FS/root/mount")
	wantNoValue(t, after, "LAN/wlan0/ibyte")
}

// Of several mounts on one mount point the last, the one statfs sees,
// counts: a tmpfs over /home replaces the xfs, and an ignored overlay
// over / hides the ext4 under it.
func TestStackedMounts(t *testing.T) {
	root := copyFixture(t)
	cfg := FixtureConfig(root)
	info := filepath.Join(cfg.ProcRoot, "4242", "mountinfo")
	f, err := os.OpenFile(info, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString("90 62 0:50 / /home rw,relatime - tmpfs tmpfs rw\n" +
		"91 29 0:51 / / rw,relatime - overlay overlay rw,lowerdir=/l,upperdir=/u,workdir=/w\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	s := build(t, providers(t, cfg), nil)
	wantText(t, s, "FS/home/fstype", "tmpfs")
	absent(t, s, "FS/root/")
}

// procfs indexes the fields of a /proc/net/dev line without checking
// their number; a truncated line must fail LAN, not panic the daemon.
func TestTruncatedNetDevFailsLAN(t *testing.T) {
	root := copyFixture(t)
	cfg := FixtureConfig(root)
	ps := providers(t, cfg)
	build(t, ps, nil)
	src := filepath.Join(cfg.ProcRoot, "4242", "net", "dev")
	replace(t, src, "  eth0: 9876543210 7654321   12   34", "  eth0: 9876543210\n#")
	s := build(t, ps, nil)
	if len(s.Failures) != 1 {
		t.Fatalf("failures %v, want one for %s", s.Failures, src)
	}
	wantNoValue(t, s, "LAN/eth0/ibyte")
	wantUint(t, s, "IP/ipacket", 9345678)
}

// A vmstat line that is not "name value" fails Mem/Virt, names the line,
// and leaves Mem/Real alone.
func TestMalformedVMStatFailsMemVirtOnly(t *testing.T) {
	root := copyFixture(t)
	cfg := FixtureConfig(root)
	src := filepath.Join(cfg.ProcRoot, "vmstat")
	if err := os.WriteFile(src, []byte("pgpgin 12\npgpgout twelve\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := build(t, providers(t, cfg), nil)
	err := s.Failures[src]
	if err == nil || !strings.Contains(err.Error(), "line 2") || !strings.Contains(err.Error(), "pgpgout") {
		t.Fatalf("failure of vmstat: %v", err)
	}
	if n := node(t, s, "Mem/Virt/pagein"); n.Value.OK() {
		t.Error("Mem/Virt kept a value from a file it could not read")
	}
	wantUint(t, s, "Mem/Real/size", 16303428)
}
