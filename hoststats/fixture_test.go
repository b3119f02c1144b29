package hoststats

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/spmi"
)

// The raw numbers below are copied from the files in testdata; the
// expected statistics are computed from them here.

func TestFixtureGuideExample(t *testing.T) {
	s := fixtureSnapshot(t)
	// testdata/proc/stat, line "cpu0": the 4th number is idle.
	const idle = 8765432
	n := node(t, s, "CPU/cpu0/idle")
	if n.Rel.String() != "1.1.4" || n.FullOID(testBase).String() != testBase.String()+".1.1.4.0" {
		t.Fatalf("CPU/cpu0/idle is %s (%s), want 1.1.4", n.Rel, n.FullOID(testBase))
	}
	wantUint(t, s, "CPU/cpu0/idle", idle)
	v, ok := s.View().Get(n.FullOID(testBase))
	if !ok || v.Kind != asn1tree.Counter64 || v.Num != idle {
		t.Fatalf("served %v %v, want Counter64 %d", v, ok, idle)
	}
	if len(s.Failures) != 0 {
		t.Fatalf("the fixture has unreadable sources: %v", s.Failures)
	}
}

func TestFixtureCPU(t *testing.T) {
	s := fixtureSnapshot(t)
	// user nice system idle iowait irq softirq steal per "cpuN" line.
	lines := [][8]uint64{
		{120345, 230, 45012, 8765432, 3021, 0, 1204, 17},
		{118902, 198, 44321, 8770011, 2987, 0, 1150, 21},
		{121877, 305, 46789, 8759876, 3102, 0, 1190, 15},
		{117654, 167, 43876, 8771234, 2890, 0, 1122, 19},
	}
	// The statistic each field of a cpu line becomes, in the line's order.
	names := [8]string{"user", "nice", "kern", "idle", "wait", "irq", "softirq", "steal"}
	var sum [8]uint64
	want := map[string]uint32{}
	for i, l := range lines {
		cx := fmt.Sprintf("CPU/cpu%d/", i)
		want[fmt.Sprintf("cpu%d", i)] = uint32(i + 1)
		for j, v := range l {
			wantUint(t, s, cx+names[j], v)
			sum[j] += v
		}
	}
	if got := instances(t, s, "CPU/"); !maps.Equal(got, want) {
		t.Errorf("CPU instances %v, want %v", got, want)
	}
	// total is ASN 0 and holds the kernel's "cpu" line, which is the sum.
	wantRel(t, s, "CPU/total/", "1.0")
	if node(t, s, "CPU/total/").Instance {
		t.Error("CPU/total is an instance; it must be a permanent subcontext")
	}
	for j := range names {
		wantUint(t, s, "CPU/total/"+names[j], sum[j])
	}
}

func TestFixtureMem(t *testing.T) {
	s := fixtureSnapshot(t)
	// testdata/proc/meminfo (kB).
	const total, free, avail, buffers, cached, anon = 16303428, 2345678, 9876543, 345678, 6543210, 5432100
	wantUint(t, s, "Mem/Real/size", total)
	wantUint(t, s, "Mem/Real/free", free)
	wantUint(t, s, "Mem/Real/avail", avail)
	wantUint(t, s, "Mem/Real/buffers", buffers)
	wantUint(t, s, "Mem/Real/cached", cached)
	pfree := float64(free) / total * 100 // 14.3876...
	wantFloat(t, s, "Mem/Real/%free", pfree)
	wantFloat(t, s, "Mem/Real/%comp", float64(anon)/total*100)
	// Served with two decimals: the wire carries round(value*100).
	n := node(t, s, "Mem/Real/%free")
	wantRel(t, s, "Mem/Real/%free", "2.1.3")
	if v := spmi.SNMPValue(n.Stat, n.Value); v.Kind != asn1tree.Gauge32 || v.Num != uint64(math.Round(pfree*100)) {
		t.Errorf("Mem/Real/%%free served as %v %v, want Gauge32 %v", v.Kind, v, math.Round(pfree*100))
	}
	// testdata/proc/vmstat: reclaim is summed by reclaimer (kswapd, direct,
	// khugepaged), never adding the anon/file split of the same pages.
	wantRel(t, s, "Mem/Virt/pagein", "2.2.1")
	wantUint(t, s, "Mem/Virt/pagein", 4410236)
	wantUint(t, s, "Mem/Virt/pageout", 9120004)
	wantUint(t, s, "Mem/Virt/swapin", 1200)
	wantUint(t, s, "Mem/Virt/swapout", 3400)
	wantUint(t, s, "Mem/Virt/faults", 123456789)
	wantUint(t, s, "Mem/Virt/majfaults", 45678)
	wantUint(t, s, "Mem/Virt/steal", 5000+700+30)
	wantUint(t, s, "Mem/Virt/scan", 9000+1100+40)
}

func TestFixturePagSp(t *testing.T) {
	s := fixtureSnapshot(t)
	// testdata/proc/swaps: /dev/sda3 8388604 KiB, 524288 used, priority -2;
	// /swapfile 2097148 KiB, 0 used, priority -3.
	const size1, used1, size2, used2 = 8388604, 524288, 2097148, 0
	size, free := uint64(size1+size2), uint64(size1+size2-used1-used2)
	wantUint(t, s, "PagSp/size", size)
	wantUint(t, s, "PagSp/free", free)
	wantFloat(t, s, "PagSp/%free", float64(free)/float64(size)*100)
	// Instance numbers are allocated after the context's statistics 1..3.
	if got, want := instances(t, s, "PagSp/"), map[string]uint32{"sda3": 4, "swapfile": 5}; !maps.Equal(got, want) {
		t.Errorf("PagSp instances %v, want %v", got, want)
	}
	wantUint(t, s, "PagSp/sda3/used", used1)
	wantUint(t, s, "PagSp/sda3/free", size1-used1)
	wantFloat(t, s, "PagSp/sda3/%free", float64(size1-used1)/size1*100)
	wantFloat(t, s, "PagSp/swapfile/%free", 100)
	n := node(t, s, "PagSp/sda3/priority")
	if v := spmi.SNMPValue(n.Stat, n.Value); v.Kind != asn1tree.Integer32 || v.Signed() != -2 {
		t.Errorf("priority served as %v %v, want Integer32 -2", v.Kind, v)
	}
	if d := node(t, s, "PagSp/sda3/").Descr; d != "/dev/sda3" {
		t.Errorf("PagSp/sda3 description %q, want the device path", d)
	}
}

func TestFixtureDisk(t *testing.T) {
	s := fixtureSnapshot(t)
	// Whole devices only (partitions sda1..3 and sdb1 are not in
	// testdata/sys/block), and loop0 is ignored by DefaultDiskIgnore.
	if got, want := slices.Sorted(maps.Keys(instances(t, s, "Disk/"))), []string{"sda", "sdb"}; !slices.Equal(got, want) {
		t.Errorf("Disk instances %v, want %v", got, want)
	}
	absent(t, s, "Disk/loop0/")
	absent(t, s, "Disk/sda1/")
	// testdata/proc/diskstats, line sda: reads 1234567, sectors read
	// 98765432, read ms 456789, writes 2345678, sectors written 87654321,
	// write ms 1234567, in progress 2, io ms 987654.
	wantUint(t, s, "Disk/sda/reads", 1234567)
	wantUint(t, s, "Disk/sda/writes", 2345678)
	wantUint(t, s, "Disk/sda/xfer", 1234567+2345678)
	wantUint(t, s, "Disk/sda/rblk", 98765432)
	wantUint(t, s, "Disk/sda/wblk", 87654321)
	wantUint(t, s, "Disk/sda/busy", 987654/10) // ms to hundredths of a second
	wantUint(t, s, "Disk/sda/qlen", 2)
	wantUint(t, s, "Disk/sda/rtime", 456789)
	wantUint(t, s, "Disk/sda/wtime", 1234567)
	wantUint(t, s, "Disk/sdb/busy", 456789/10)
	if n := node(t, s, "Disk/sda/busy"); n.Stat.Val != ddswire.SiCounter {
		t.Error("busy must be a counter, whose rate is percent busy")
	}
}

func TestFixtureLAN(t *testing.T) {
	s := fixtureSnapshot(t)
	// testdata/sys/class/net/*/ifindex.
	if got, want := instances(t, s, "LAN/"), map[string]uint32{"lo": 1, "eth0": 2, "wlan0": 5}; !maps.Equal(got, want) {
		t.Errorf("LAN instances %v, want %v", got, want)
	}
	wantRel(t, s, "LAN/wlan0/ibyte", "5.5.3")
	// testdata/proc/4242/net/dev, line eth0.
	wantUint(t, s, "LAN/eth0/ibyte", 9876543210)
	wantUint(t, s, "LAN/eth0/ipacket", 7654321)
	wantUint(t, s, "LAN/eth0/obyte", 1234567890)
	wantUint(t, s, "LAN/eth0/ierror", 12)
	wantUint(t, s, "LAN/eth0/idrop", 34)
	wantUint(t, s, "LAN/eth0/collision", 5)
	wantUint(t, s, "LAN/eth0/imcast", 56789)
	wantUint(t, s, "LAN/eth0/mtu", 1500)
	wantUint(t, s, "LAN/eth0/speed", 1000)
	wantNoValue(t, s, "LAN/wlan0/speed") // no speed attribute
	// Counters above 32 bits are served exactly (Counter64).
	n := node(t, s, "LAN/eth0/ibyte")
	if v := spmi.SNMPValue(n.Stat, n.Value); v.Kind != asn1tree.Counter64 || v.Num != 9876543210 {
		t.Errorf("ibyte served as %v %v", v.Kind, v)
	}
}

func TestFixtureProtocols(t *testing.T) {
	s := fixtureSnapshot(t)
	// testdata/proc/4242/net/snmp (proc/self links to 4242).
	for path, want := range map[string]uint64{
		"IP/ipacket": 9345678, "IP/opacket": 8765432, "IP/forward": 5678, "IP/deliver": 9300123,
		"IP/idiscard": 87, "IP/odiscard": 21, "IP/noroute": 43, "IP/reasmfail": 7, "IP/fragcreate": 246,
		"TCP/activeopen": 34567, "TCP/passiveopen": 12345, "TCP/attemptfail": 678, "TCP/estabreset": 901,
		"TCP/currestab": 23, "TCP/isegment": 8765432, "TCP/osegment": 7654321, "TCP/retrans": 4321,
		"TCP/ierror": 5, "TCP/orst": 2345,
		"UDP/idatagram": 567890, "UDP/odatagram": 543210, "UDP/noport": 1234, "UDP/ierror": 56,
		"UDP/rcvbuferr": 7, "UDP/sndbuferr": 8,
		"ICMP/imsg": 4567, "ICMP/omsg": 4321, "ICMP/ierror": 8, "ICMP/iecho": 2100, "ICMP/oecho": 1110,
		"ICMP/iechorep": 1170, "ICMP/oechorep": 2100, "ICMP/idestunr": 1234, "ICMP/odestunr": 1111,
	} {
		wantUint(t, s, path, want)
	}
	if n := node(t, s, "TCP/currestab"); n.Stat.Val != ddswire.SiQuantity || spmi.SNMPKind(n.Stat) != asn1tree.Gauge32 {
		t.Error("TCP/currestab must be a quantity served as Gauge32")
	}
}

func TestFixtureProc(t *testing.T) {
	s := fixtureSnapshot(t)
	// testdata/proc/stat and loadavg.
	wantUint(t, s, "Proc/runque", 3)
	wantUint(t, s, "Proc/swpque", 1)
	wantUint(t, s, "Proc/pswitch", 987654321)
	wantUint(t, s, "Proc/forks", 123456)
	wantFloat(t, s, "Proc/loadavg1", 0.52)
	wantFloat(t, s, "Proc/loadavg15", 0.59)
	n := node(t, s, "Proc/loadavg5")
	if v := spmi.SNMPValue(n.Stat, n.Value); v.Num != 61 {
		t.Errorf("loadavg5 0.61 served as %v, want 61", v)
	}
	// One instance per PID directory, numbered by PID.
	pids := map[string]uint32{"1": 1, "2": 2, "734": 734, "1187": 1187, "2210": 2210, "4242": 4242}
	if got := instances(t, s, "Proc/pid/"); !maps.Equal(got, pids) {
		t.Errorf("Proc/pid instances %v, want %v", got, pids)
	}
	wantUint(t, s, "Proc/nprocs", uint64(len(pids)))
	wantRel(t, s, "Proc/pid/", "10.100")
	wantRel(t, s, "Proc/pid/1187/threads", "10.100.1187.6")
	// testdata/proc/1187/stat: java, 42 threads, utime 987654, stime
	// 123456, vsize 8123456512 bytes, rss 524288 pages of 4096 bytes.
	wantText(t, s, "Proc/pid/1187/name", "java")
	wantText(t, s, "Proc/pid/1187/state", "S")
	wantUint(t, s, "Proc/pid/1187/threads", 42)
	wantUint(t, s, "Proc/pid/1187/usercpu", 987654)
	wantUint(t, s, "Proc/pid/1187/syscpu", 123456)
	wantUint(t, s, "Proc/pid/1187/vsize", 8123456512/1024)
	wantUint(t, s, "Proc/pid/1187/rss", 524288*4096/1024)
	wantUint(t, s, "Proc/pid/1187/ppid", 1)
	// Command names with blanks and parentheses survive.
	wantText(t, s, "Proc/pid/734/name", "(sd-pam)")
	wantText(t, s, "Proc/pid/2210/name", "tmux: server")
	wantText(t, s, "Proc/pid/2210/state", "R")
	if d := node(t, s, "Proc/pid/2210/").Descr; d != "tmux: server" {
		t.Errorf("process description %q, want the command name", d)
	}
}

func TestFixtureFS(t *testing.T) {
	s := fixtureSnapshot(t)
	// Mount points of testdata/proc/4242/mountinfo whose type is not
	// ignored, numbered in mount point order.
	want := map[string]uint32{"root": 1, "boot": 2, "boot_efi": 3, "home": 4, "run": 5, "srv_backup_set": 6}
	got := instances(t, s, "FS/")
	if !maps.Equal(got, want) {
		t.Errorf("FS instances %v, want %v", got, want)
	}
	pseudo := []string{"proc", "sysfs", "devtmpfs", "devpts", "cgroup2", "autofs", "mqueue", "overlay"}
	for name := range got {
		if typ := value(t, s, "FS/"+name+"/fstype").TextValue(); slices.Contains(pseudo, typ) {
			t.Errorf("FS/%s has ignored type %s", name, typ)
		}
	}
	wantText(t, s, "FS/root/mount", "/")
	wantText(t, s, "FS/srv_backup_set/mount", "/srv/backup set") // \040 unescaped
	wantText(t, s, "FS/home/fstype", "xfs")
	if d := node(t, s, "FS/boot_efi/").Descr; d != "/boot/efi" {
		t.Errorf("FS/boot_efi description %q, want the mount point", d)
	}
	// FixtureStatfs: "/" has 61022208 blocks of 4096 bytes, 23456789
	// free, 20345678 available; 15261696 inodes, 13876543 free.
	const blocks, bfree, bavail, files, ffree = 61022208, 23456789, 20345678, 15261696, 13876543
	wantUint(t, s, "FS/root/size", blocks*4)
	wantUint(t, s, "FS/root/free", bfree*4)
	wantUint(t, s, "FS/root/avail", bavail*4)
	used := float64(blocks - bfree)
	wantFloat(t, s, "FS/root/%used", used/(used+bavail)*100)
	wantUint(t, s, "FS/root/inodes", files)
	wantUint(t, s, "FS/root/ifree", ffree)
	wantFloat(t, s, "FS/root/%iused", float64(files-ffree)/files*100)
	wantNoValue(t, s, "FS/boot_efi/%iused") // vfat has no inodes
	// 8589934592 blocks of 4096 bytes is 32 TiB: beyond Gauge32 in KiB.
	n := node(t, s, "FS/srv_backup_set/size")
	if v := spmi.SNMPValue(n.Stat, n.Value); v.Kind != asn1tree.Counter64 || v.Num != 8589934592*4 {
		t.Errorf("wide size served as %v %v", v.Kind, v)
	}
}

func TestFixtureTopLevelNumbering(t *testing.T) {
	s := fixtureSnapshot(t)
	var got []string
	for _, c := range s.Top.Children {
		got = append(got, fmt.Sprintf("%s=%d", c.Name, c.ASN))
	}
	want := "CPU=1 Mem=2 PagSp=3 Disk=4 LAN=5 IP=6 TCP=7 UDP=8 ICMP=9 Proc=10 FS=11"
	if strings.Join(got, " ") != want {
		t.Errorf("top level %v, want %s", got, want)
	}
	var names []string
	for _, c := range s.Top.Children {
		names = append(names, c.Name)
	}
	if !slices.Equal(names, Names()) {
		t.Errorf("Names() = %v, providers built %v", Names(), names)
	}
}

// The builder refuses long names, long descriptions and duplicate names
// or numbers; this checks that the whole fixture passes, and that no
// description relies on the builder's truncation.
func TestFixtureDescriptorsValid(t *testing.T) {
	s := fixtureSnapshot(t)
	n := 0
	spmi.Walk(s.Top, func(x *spmi.Node) bool {
		if x.Stat != nil {
			n++
			if len(x.Stat.Descr) == 0 || len(x.Stat.Descr) > spmiwire.MaxDescr || len(x.Stat.Name) > spmiwire.MaxName {
				t.Errorf("%s: name or description out of limits", x.Path)
			}
			if x.Stat.Val == ddswire.SiCounter && x.Stat.Data != spmiwire.SiLong {
				t.Errorf("%s: counters are integers", x.Path)
			}
			if x.Stat.Data != spmiwire.SiText && x.Stat.Max <= x.Stat.Min {
				t.Errorf("%s: no default scale", x.Path)
			}
		}
		if x.Cx != nil && len(x.Cx.Descr) > spmiwire.MaxDescr {
			t.Errorf("%s: template description too long", x.Path)
		}
		return true
	})
	if n != s.NumStats {
		t.Errorf("walked %d statistics, snapshot has %d", n, s.NumStats)
	}
}
