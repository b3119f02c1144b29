package spmi

import (
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
	"weak"
)

// memoryReturner gives memory back to the system after large rebuilds and
// departures: at once, a moment later, and then every few seconds until
// the parts those refreshes replaced are collected, at most returnFor
// after the last request. Front ends hold the snapshots that reference
// them a while (requests being answered; an AgentX session keeps its
// transactions' views until the master's next response, a ping's answer
// at the latest), and a daemon that allocates little may not collect
// again for minutes, so its resident set would stay that of the largest
// tree it ever served. One goroutine serves every request, so suppliers
// registering one after another do not start a collector loop each.
type memoryReturner struct {
	mu      sync.Mutex
	watch   []weak.Pointer[part] // parts gone, until collected
	until   time.Time
	running bool
	closed  bool          // close was called: no loop starts any more
	quit    chan struct{} // closed by close; made by the first request
	wg      sync.WaitGroup
	returns atomic.Int32 // times memory was returned, for tests
}

// request asks for memory to be returned, watching the parts gone.
func (m *memoryReturner) request(gone []*part) {
	m.mu.Lock()
	for _, p := range gone {
		m.watch = append(m.watch, weak.Make(p))
	}
	m.until = time.Now().Add(returnFor)
	start := !m.running && !m.closed
	if start {
		m.running = true
		if m.quit == nil {
			m.quit = make(chan struct{})
		}
		m.wg.Add(1)
	}
	quit := m.quit
	m.mu.Unlock()
	if start {
		go m.loop(quit)
	}
}

// close stops the loop and waits for it to end; later requests return
// no memory.
func (m *memoryReturner) close() {
	m.mu.Lock()
	if !m.closed && m.quit != nil {
		close(m.quit)
	}
	m.closed = true
	m.mu.Unlock()
	m.wg.Wait()
}

func (m *memoryReturner) loop(quit chan struct{}) {
	defer m.wg.Done()
	m.free()
	wait := returnAgain
	for {
		t := time.NewTimer(wait)
		select {
		case <-quit:
			t.Stop()
			m.mu.Lock()
			m.watch, m.running = nil, false
			m.mu.Unlock()
			return
		case <-t.C:
		}
		m.free() // collects, then returns what it freed
		if !m.keepOn() {
			return
		}
		wait = returnEvery
	}
}

func (m *memoryReturner) free() {
	m.returns.Add(1)
	debug.FreeOSMemory()
}

// keepOn drops the watched parts that were collected and tells whether
// any is left (and there is time left); if not, the loop ends.
func (m *memoryReturner) keepOn() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	live := m.watch[:0]
	for _, w := range m.watch {
		if w.Value() != nil {
			live = append(live, w)
		}
	}
	clear(m.watch[len(live):])
	m.watch = live
	if len(m.watch) == 0 || time.Now().After(m.until) {
		m.watch, m.running = nil, false
		return false
	}
	return true
}

const (
	returnAgain = 2 * time.Second
	returnEvery = 5 * time.Second
	returnFor   = time.Minute
)

// ReturnMemory asks for memory to be given back to the system as after a
// departure: at once and again a moment later, for what its owner was
// still dropping. The control socket asks when a session that held much
// (large runtime hotsets) ends.
func (h *Hierarchy) ReturnMemory() { h.mem.request(nil) }

// Close ends the hierarchy's own goroutines: it stops returning memory
// and waits for the readings under way. Call it once nothing asks for
// snapshots any more (the daemon, once its parts have stopped); a
// reading asked for later still works, and Close does not wait for it.
func (h *Hierarchy) Close() {
	h.mem.close()
	h.bg.Wait()
}
