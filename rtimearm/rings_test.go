package rtimearm

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// procs stands for /proc in the accounting tests: the live processes by
// pid with their start times, and the rings (inodes) each maps.
type procs struct {
	start map[int32]uint64
	maps  map[int32]map[uint64]bool
	reads int // of /proc/<pid>/maps
}

func newProcs() *procs {
	return &procs{start: map[int32]uint64{}, maps: map[int32]map[uint64]bool{}}
}

func (p *procs) run(pid int32, start uint64) { p.start[pid], p.maps[pid] = start, map[uint64]bool{} }
func (p *procs) exit(pid int32)              { delete(p.start, pid); delete(p.maps, pid) }

// registry returns a registry on p and the clock c.
func (p *procs) registry(lim Limits, c *Clock) *Registry {
	r := NewRegistry(lim, 75, time.Minute, nil, nil)
	r.now = c.Now
	r.startOf = func(pid int32) uint64 { return p.start[pid] }
	r.mapsRing = func(pid int32, _, ino uint64) bool { p.reads++; return p.maps[pid][ino] }
	return r
}

var nextIno uint64

// hello is a Hello of pid as the server takes it: admitted, given a file
// (an inode of its own) that the process maps, and left (the connection
// closed, the mapping kept). It returns the refusal, or "".
func (p *procs) hello(r *Registry, uid uint32, pid int32, size uint64) string {
	rg, reason := r.admit(uid, pid, size)
	if rg == nil {
		return reason
	}
	nextIno++
	r.mu.Lock()
	rg.ino = nextIno
	r.ended(rg, true)
	r.mu.Unlock()
	p.maps[pid][rg.ino] = true
	return ""
}

// held is what uid holds: rings and bytes.
func held(r *Registry, uid uint32) (int, uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if u := r.byUID[uid]; u != nil {
		return u.rings, u.bytes
	}
	return 0, 0
}

// Issue 26 in the registry: forty processes of one user each asking for
// twenty rings, keeping every one mapped after its registration ended,
// got 800 (a ring's place was freed when its connection closed). Now a
// ring holds its place until its process exits: the user holds at most
// MaxProcsPerUID rings, each process at most MaxPerPID, the refusals say
// which limit, and another user still registers.
func TestChurnedRingsCountUntilTheProcessExits(t *testing.T) {
	const size = 3 << 20
	p, c := newProcs(), &Clock{}
	r := p.registry(Limits{MaxApps: 1, MaxTrans: 1, MaxProcs: 64, MaxProcsPerUID: 16, HelloRate: 1e9, HelloBurst: 1 << 20}, c)
	reasons := map[string]int{}
	got := 0
	for pid := int32(1000); pid < 1040; pid++ {
		p.run(pid, uint64(pid)*7)
		for range 20 {
			if reason := p.hello(r, 65534, pid, size); reason != "" {
				reasons[reason]++
			} else {
				got++
			}
		}
	}
	rings, bytes := held(r, 65534)
	if got != 16 || rings != 16 || bytes != 16*size {
		t.Errorf("uid 65534 got %d rings, holds %d rings of %d bytes, want 16 and %d bytes (its share)", got, rings, bytes, 16*size)
	}
	for reason, n := range reasons {
		if !strings.Contains(reason, "(arm.max_processes_per_uid)") && !strings.Contains(reason, "the fixed limit per process") {
			t.Errorf("%d refusals %q name no limit", n, reason)
		}
	}
	if reasons[fmt.Sprintf("this process holds %d rings, the fixed limit per process (one for libarm, one for package arm)", DefaultPerPID)] == 0 {
		t.Errorf("no refusal at the limit per process: %v", reasons)
	}
	// Another user is not locked out.
	p.run(2000, 1)
	if reason := p.hello(r, 1000, 2000, size); reason != "" {
		t.Errorf("another user refused: %s", reason)
	}

	// The churners exit: their rings go at a drain a second after the last
	// look at /proc (made at the limit), not before.
	for pid := int32(1000); pid < 1040; pid++ {
		p.exit(pid)
	}
	r.DrainAll()
	if rings, _ := held(r, 65534); rings != 16 {
		t.Fatalf("within a second of the last look uid 65534 holds %d rings, want 16", rings)
	}
	c.Advance(pruneEvery)
	r.DrainAll()
	if rings, _ := held(r, 65534); rings != 0 {
		t.Fatalf("after the processes exited, uid 65534 still holds %d rings", rings)
	}
	for pid := int32(1000); pid < 1040; pid++ {
		p.run(pid, uint64(pid)*11) // the same pids, other processes
	}
	if reason := p.hello(r, 65534, 1000, size); reason != "" {
		t.Fatalf("refused after the churners exited: %s", reason)
	}
	if u := r.RingUse(); u.Rings != 2 || u.Bytes != 2*size || u.MostByUID != size {
		t.Errorf("RingUse %+v, want 2 rings, %d bytes, %d by the user holding most", u, 2*size, size)
	}
}

// Exits are looked for at most once per pruneEvery on the registry's
// clock, at drains and at a limit.
func TestExitedProcessesAreLookedForOnceASecond(t *testing.T) {
	p, c := newProcs(), &Clock{}
	r := p.registry(Limits{MaxApps: 1, MaxTrans: 1, MaxProcs: 4, MaxProcsPerUID: 4}, c)
	c.Advance(time.Hour)
	r.DrainAll() // looks now: nothing to see
	for pid := int32(1); pid <= 4; pid++ {
		p.run(pid, 1)
		if reason := p.hello(r, 7, pid, 1); reason != "" {
			t.Fatal(reason)
		}
	}
	p.exit(1)
	c.Advance(pruneEvery - time.Nanosecond)
	r.DrainAll()
	p.run(5, 1)
	if reason := p.hello(r, 7, 5, 1); !strings.Contains(reason, "(arm.max_processes)") {
		t.Fatalf("within a second of the last look: %q, want a refusal at arm.max_processes", reason)
	}
	c.Advance(time.Nanosecond)
	if reason := p.hello(r, 7, 5, 1); reason != "" {
		t.Fatalf("a second on, the exited process's ring is still held: %s", reason)
	}
}

// A program that reconnects (package arm's Close and Open, libarm after a
// restart) lets its earlier ring go: each time it asks again, its rings
// that it maps no longer are released and it gets a new one. One that
// keeps them is refused, and its /proc/<pid>/maps is read only while it
// is at a limit.
func TestReconnectingProcessGetsANewRingWhenItUnmapsTheOld(t *testing.T) {
	p, c := newProcs(), &Clock{}
	r := p.registry(Limits{MaxApps: 1, MaxTrans: 1}, c)
	p.run(42, 9)
	for i := range 10 {
		if reason := p.hello(r, 1000, 42, 100); reason != "" {
			t.Fatalf("reconnection %d refused: %s", i, reason)
		}
		clear(p.maps[42]) // the library drops the ring when its registration ends
	}
	if rings, _ := held(r, 1000); rings != DefaultPerPID {
		t.Errorf("holds %d rings, want %d (the last two, counted until it is seen without them)", rings, DefaultPerPID)
	}
	reads := p.reads
	p.hello(r, 1000, 42, 100)
	p.hello(r, 1000, 42, 100) // kept mapped: the next is refused
	if reason := p.hello(r, 1000, 42, 100); !strings.Contains(reason, "the fixed limit per process") {
		t.Errorf("a process keeping its rings: %q, want a refusal at the limit per process", reason)
	}
	if p.reads-reads > 3*DefaultPerPID {
		t.Errorf("%d reads of its maps for 3 Hellos", p.reads-reads)
	}
	// A new process in the same pid is not charged its predecessor's rings.
	p.exit(42)
	p.run(42, 10)
	if reason := p.hello(r, 1000, 42, 100); reason != "" {
		t.Errorf("a new process in a recycled pid: %s", reason)
	}
}

// A ring the process never received (the Welcome could not be sent), or
// any when the daemon stops, is released with its registration.
func TestUnreceivedRingIsReleasedAtOnce(t *testing.T) {
	p, c := newProcs(), &Clock{}
	r := p.registry(Limits{MaxApps: 1, MaxTrans: 1}, c)
	p.run(5, 1)
	rg, reason := r.admit(0, 5, 10)
	if reason != "" {
		t.Fatal(reason)
	}
	r.mu.Lock()
	r.ended(rg, false)
	r.mu.Unlock()
	if rings, b := held(r, 0); rings != 0 || b != 0 {
		t.Errorf("holds %d rings, %d bytes after an unreceived ring", rings, b)
	}
}

// Each user may send HelloBurst Hellos at once, then HelloRate a second;
// the refusal names both settings, and others are not affected.
func TestHellosAreRateLimitedPerUser(t *testing.T) {
	p, c := newProcs(), &Clock{}
	r := p.registry(Limits{MaxApps: 1, MaxTrans: 1, MaxProcs: 1000, MaxProcsPerUID: 1000, HelloRate: 4, HelloBurst: 10}, c)
	pid := int32(100)
	try := func(uid uint32) string {
		pid++
		p.run(pid, 1)
		return p.hello(r, uid, pid, 1)
	}
	for i := range 10 {
		if reason := try(1); reason != "" {
			t.Fatalf("Hello %d of the burst: %s", i, reason)
		}
	}
	reason := try(1)
	if !strings.Contains(reason, "(arm.hello_burst_per_uid, arm.hello_rate_per_uid)") {
		t.Fatalf("beyond the burst: %q, want a refusal naming the settings", reason)
	}
	if reason := try(2); reason != "" {
		t.Fatalf("another user: %s", reason)
	}
	c.Advance(time.Second)
	ok := 0
	for range 10 {
		if try(1) == "" {
			ok++
		}
	}
	if ok != 4 {
		t.Errorf("a second later %d Hellos passed, want 4", ok)
	}
	c.Advance(time.Hour) // full again, never more than the burst
	ok = 0
	for range 20 {
		if try(1) == "" {
			ok++
		}
	}
	if ok != 10 {
		t.Errorf("after an hour %d Hellos passed, want the burst of 10", ok)
	}
}

// mapsFile reads /proc/<pid>/maps: a memfd mapped here is found by its
// device and inode, and not once unmapped; a process gone maps nothing.
func TestMapsFile(t *testing.T) {
	fd, err := unix.MemfdCreate("subagent-arm", unix.MFD_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	unix.Ftruncate(fd, 4096)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		t.Fatal(err)
	}
	self := int32(os.Getpid())
	if mapsFile(self, st.Dev, st.Ino) {
		t.Fatal("found before it is mapped")
	}
	mem, err := unix.Mmap(fd, 0, 4096, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	if !mapsFile(self, st.Dev, st.Ino) {
		t.Error("not found while mapped")
	}
	if mapsFile(self, st.Dev, st.Ino+1) || mapsFile(self, st.Dev+1, st.Ino) {
		t.Error("another file found")
	}
	unix.Munmap(mem)
	if mapsFile(self, st.Dev, st.Ino) {
		t.Error("found after munmap")
	}
	if mapsFile(1<<30, st.Dev, st.Ino) {
		t.Error("a process that does not exist maps it")
	}
	for _, tc := range []struct {
		line string
		want bool
	}{
		{"7f70-7f71 rw-s 00000000 00:01 9616                       /memfd:subagent-arm (deleted)", true},
		{"7f70-7f71 rw-s 00000000 00:01 96160 /memfd:x", false},
		{"7f70-7f71 rw-s 00000000 00:01 961", false},
		{"7f70-7f71 rw-s 00000000 00:01 9616", true},
		{"", false},
	} {
		if got := mapsLineIs([]byte(tc.line), "00:01 9616"); got != tc.want {
			t.Errorf("%q: %v, want %v", tc.line, got, tc.want)
		}
	}
}
