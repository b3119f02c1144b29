package hoststats

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The live tests read this host's /proc and /sys; their expectations come
// from reading the same files independently of procfs.

func TestLiveHost(t *testing.T) {
	s := build(t, providers(t, Config{}), nil)

	// One CPU instance per "cpuN" line of /proc/stat.
	f, err := os.Open("/proc/stat")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines := 0
	for sc := bufio.NewScanner(f); sc.Scan(); {
		if l := sc.Text(); strings.HasPrefix(l, "cpu") && len(l) > 3 && l[3] >= '0' && l[3] <= '9' {
			lines++
		}
	}
	if got := len(instances(t, s, "CPU/")); got != lines || lines == 0 {
		t.Errorf("%d CPU instances, /proc/stat has %d cpuN lines", got, lines)
	}

	if v := value(t, s, "Mem/Real/size"); v.Uint64() == 0 {
		t.Error("Mem/Real/size is 0")
	}

	b, err := os.ReadFile("/sys/class/net/lo/ifindex")
	if err != nil {
		t.Fatalf("this host has no loopback in sysfs: %v", err)
	}
	idx, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 32)
	if err != nil {
		t.Fatal(err)
	}
	if n := node(t, s, "LAN/lo/"); uint64(n.ASN) != idx {
		t.Errorf("LAN/lo is number %d, ifindex is %d", n.ASN, idx)
	}

	// This test process, by PID, named as the kernel truncates its
	// executable's name (15 bytes).
	pid := strconv.Itoa(os.Getpid())
	comm := filepath.Base(os.Args[0])
	if len(comm) > 15 {
		comm = comm[:15]
	}
	wantText(t, s, "Proc/pid/"+pid+"/name", comm)
	if n := node(t, s, "Proc/pid/"+pid+"/"); strconv.Itoa(int(n.ASN)) != pid {
		t.Errorf("process %s has number %d", pid, n.ASN)
	}

	root := rootFSType(t)
	if r := DefaultFSTypeIgnore; strings.Contains(r, "|"+root+"|") || strings.Contains(r, "("+root+"|") {
		t.Skipf("/ is %s, which FS ignores by default", root)
	}
	wantText(t, s, "FS/root/mount", "/")
	wantText(t, s, "FS/root/fstype", root)
	if v := value(t, s, "FS/root/size"); v.Uint64() == 0 {
		t.Error("FS/root/size is 0")
	}
}

// rootFSType is the type of the last mount on "/" in mountinfo.
func rootFSType(t *testing.T) string {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	typ := ""
	for _, l := range strings.Split(string(b), "\n") {
		pre, post, ok := strings.Cut(l, " - ")
		if f := strings.Fields(pre); ok && len(f) > 4 && f[4] == "/" {
			typ = strings.Fields(post)[0]
		}
	}
	if typ == "" {
		t.Fatal("no / in /proc/self/mountinfo")
	}
	return typ
}
