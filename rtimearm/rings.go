package rtimearm

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/perfagent/subagent/client/ddswire"
)

// ring is the place one file takes in the limits. The file lives as long
// as someone maps it, and a process keeps its mapping after its
// registration ends (a hostile one on purpose: issue 26 kept 800 rings,
// 2.79 GB, for 40 processes), so the place outlives the registration: it
// is released when the process that received the file has exited, or
// when that process, asking for another, is seen to map it no longer.
type ring struct {
	uid      uint32
	pid      int32
	start    uint64 // the process's start time (/proc/<pid>/stat), 0 unknown
	dev, ino uint64 // the memfd, as /proc/<pid>/maps shows it; 0 before it exists
	size     uint64
}

// usage is what one user holds.
type usage struct {
	rings, apps, trans int
	bytes              uint64 // of its rings
}

// helloBucket holds the Hellos of one user: a token bucket
// (Limits.HelloRate, HelloBurst). Each Hello that reaches the limits takes
// a token, because each may cost a file (a few milliseconds of page
// faults) or a look at /proc.
type helloBucket struct {
	tokens float64
	at     time.Time
}

// pruneEvery is how often the rings of departed registrations are checked
// for processes that have exited: at drains, and when a limit is reached.
const pruneEvery = time.Second

// maxMapsRead bounds what is read of a process's /proc/<pid>/maps when
// looking for its ring; a process with more mappings is taken to hold it.
const maxMapsRead = 1 << 20

// takeHello takes a token of uid's bucket, or reports that there is none.
func (r *Registry) takeHello(uid uint32, now time.Time) bool {
	b := r.hellos[uid]
	if b == nil {
		b = &helloBucket{tokens: float64(r.lim.HelloBurst), at: now}
		r.hellos[uid] = b
	}
	r.refill(b, now)
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

func (r *Registry) refill(b *helloBucket, now time.Time) {
	if now.After(b.at) {
		b.tokens = min(float64(r.lim.HelloBurst), b.tokens+now.Sub(b.at).Seconds()*r.lim.HelloRate)
		b.at = now
	}
}

// reserve counts a ring about to be created against the limits, or
// returns the reason it may not be. The reason names the setting and holds
// no per-connection number: refusals are logged once per user and reason.
func (r *Registry) reserve(uid uint32, pid int32, start, size uint64) (*ring, string) {
	u := r.byUID[uid]
	switch {
	case len(r.rings) >= r.lim.MaxProcs:
		return nil, fmt.Sprintf("%d rings are held, by registered processes and by processes that still map theirs, the limit (arm.max_processes)", r.lim.MaxProcs)
	case u != nil && u.rings >= r.lim.MaxProcsPerUID:
		return nil, fmt.Sprintf("this user holds %d rings, by registered processes and by processes that still map theirs, the limit (arm.max_processes_per_uid)", r.lim.MaxProcsPerUID)
	case r.byPID[pid] >= r.lim.MaxPerPID:
		return nil, fmt.Sprintf("this process holds %d rings, the fixed limit per process (one for libarm, one for package arm)", r.lim.MaxPerPID)
	}
	rg := &ring{uid: uid, pid: pid, start: start, size: size}
	r.rings[rg] = true
	u = r.use(uid)
	u.rings++
	u.bytes += size
	r.ringSize += size
	r.byPID[pid]++
	return rg, ""
}

// RingUse is what the rings of ARM processes hold.
type RingUse struct {
	Rings     int    // held by registered processes and departed ones that still map theirs
	Bytes     uint64 // their size
	MostByUID uint64 // the size held by the user holding most
}

// RingUse reports the rings held now.
func (r *Registry) RingUse() RingUse {
	r.mu.Lock()
	defer r.mu.Unlock()
	u := RingUse{Rings: len(r.rings), Bytes: r.ringSize}
	for _, b := range r.byUID {
		u.MostByUID = max(u.MostByUID, b.bytes)
	}
	return u
}

// releaseRing frees a ring's place; releasing it again does nothing.
func (r *Registry) releaseRing(rg *ring) {
	if !r.rings[rg] {
		return
	}
	delete(r.rings, rg)
	delete(r.left, rg)
	r.ringSize -= rg.size
	if u := r.byUID[rg.uid]; u != nil {
		u.rings--
		u.bytes -= rg.size
		r.unuse(rg.uid)
	}
	if r.byPID[rg.pid]--; r.byPID[rg.pid] <= 0 {
		delete(r.byPID, rg.pid)
	}
}

// ended is the end of a ring's registration. A ring its process received
// keeps its place until released (ring); one it never got, or any when
// the daemon stops, is released at once.
func (r *Registry) ended(rg *ring, received bool) {
	if rg == nil || !r.rings[rg] {
		return
	}
	if !received {
		r.releaseRing(rg)
		return
	}
	r.left[rg] = true
}

// admit takes a Hello of process pid of user uid: a ring reserved for it,
// or the reason it is refused. At a limit, the rings whose processes have
// exited are released (at most once per pruneEvery), and so are this
// process's own earlier rings that it maps no longer: a program that
// reconnects gets its new ring, one that keeps every ring gets none.
func (r *Registry) admit(uid uint32, pid int32, size uint64) (*ring, string) {
	r.mu.Lock()
	ok := r.takeHello(uid, r.now())
	r.mu.Unlock()
	if !ok {
		return nil, fmt.Sprintf("this user sent more than %d Hellos at once and %g a second since, the limit (arm.hello_burst_per_uid, arm.hello_rate_per_uid)",
			r.lim.HelloBurst, r.lim.HelloRate)
	}
	start := r.startOf(pid)
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	rg, reason := r.reserve(uid, pid, start, size)
	if rg != nil {
		return rg, ""
	}
	var own, others []*ring
	for x := range r.left {
		if x.pid == pid {
			own = append(own, x)
		}
	}
	if !now.Before(r.pruned.Add(pruneEvery)) {
		r.pruned = now
		for x := range r.left {
			if x.pid != pid {
				others = append(others, x)
			}
		}
	}
	if len(own) == 0 && len(others) == 0 {
		return nil, reason
	}
	r.mu.Unlock() // /proc is read without the lock (the deferred unlock is for the lock taken again)
	gone := r.gone(own, true)
	gone = append(gone, r.gone(others, false)...)
	r.mu.Lock()
	for _, x := range gone {
		r.releaseRing(x)
	}
	return r.reserve(uid, pid, start, size)
}

// gone lists the rings whose processes have exited or, with maps, no
// longer map them. It reads /proc: call it without the lock.
func (r *Registry) gone(rings []*ring, maps bool) []*ring {
	var out []*ring
	for _, x := range rings {
		if cur := r.startOf(x.pid); cur == 0 || (x.start != 0 && cur != x.start) ||
			(maps && !r.mapsRing(x.pid, x.dev, x.ino)) {
			out = append(out, x)
		}
	}
	return out
}

// pruneGone releases the rings of departed registrations whose processes
// have exited, at most once per pruneEvery, and forgets the Hello buckets
// that are full again.
func (r *Registry) pruneGone() {
	r.mu.Lock()
	now := r.now()
	if now.Before(r.pruned.Add(pruneEvery)) {
		r.mu.Unlock()
		return
	}
	r.pruned = now
	for uid, b := range r.hellos {
		if r.refill(b, now); b.tokens >= float64(r.lim.HelloBurst) {
			delete(r.hellos, uid)
		}
	}
	left := make([]*ring, 0, len(r.left))
	for x := range r.left {
		left = append(left, x)
	}
	r.mu.Unlock()
	if len(left) == 0 {
		return
	}
	gone := r.gone(left, false)
	r.mu.Lock()
	for _, x := range gone {
		r.releaseRing(x)
	}
	r.mu.Unlock()
}

// procStart is a process's start time, 0 when it does not exist (or
// cannot be seen).
func procStart(pid int32) uint64 { return ddswire.ProcStart(pid) }

// mapsFile reports whether process pid maps the file dev:ino, going by
// /proc/<pid>/maps. A process gone maps nothing; one whose maps cannot be
// read, or are longer than maxMapsRead, is taken to map it.
func mapsFile(pid int32, dev, ino uint64) bool {
	f, err := os.Open("/proc/" + strconv.Itoa(int(pid)) + "/maps")
	if err != nil {
		return !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, unix.ESRCH)
	}
	defer f.Close()
	want := fmt.Sprintf("%02x:%02x %d", unix.Major(dev), unix.Minor(dev), ino)
	lr := &io.LimitedReader{R: f, N: maxMapsRead}
	sc := bufio.NewScanner(lr)
	for sc.Scan() {
		if mapsLineIs(sc.Bytes(), want) {
			return true
		}
	}
	return sc.Err() != nil || lr.N <= 0
}

// mapsLineIs reports whether a /proc/<pid>/maps line ("start-end perms
// offset dev inode path") maps the file devIno ("dev inode").
func mapsLineIs(line []byte, devIno string) bool {
	// Skip the first three fields; the next two are dev and inode.
	i, field := 0, 0
	for field < 3 && i < len(line) {
		for i < len(line) && line[i] != ' ' {
			i++
		}
		for i < len(line) && line[i] == ' ' {
			i++
		}
		field++
	}
	rest := line[i:]
	return len(rest) >= len(devIno) && string(rest[:len(devIno)]) == devIno &&
		(len(rest) == len(devIno) || rest[len(devIno)] == ' ')
}
