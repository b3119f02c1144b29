package arm

import (
	"errors"
	"hash/fnv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/perfagent/subagent/client/armring"
)

// Options configure an Agent. The zero value finds the daemon as libarm
// does (Sockets).
type Options struct {
	Socket   string // daemon socket; "" tries Sockets()
	Prog     string // program name shown by the daemon; "" is os.Args[0]'s base
	Disabled bool   // measure nothing (as INVOKE_ARM=false does)
	// Retry is the time between reconnection attempts: 0 takes $ARM_RETRY
	// (seconds), as libarm does, else 1 s.
	Retry time.Duration
	// Wait is how long Open waits for the daemon to answer, registering
	// or refusing the program, trying every Retry: for a short-lived
	// program that must not lose its first measurements. 0 takes
	// $ARM_CONNECT_WAIT (seconds), as libarm's arm_init does, else one
	// attempt of at most 2 s.
	Wait time.Duration

	after func(time.Duration) <-chan time.Time // the clock of retries; tests replace it
}

// ioTimeout bounds one registration's exchange unless Wait is longer.
const ioTimeout = 2 * time.Second

// envSeconds reads the environment variable name as seconds ("2",
// "0.05"), at most an hour, as libarm does; ok is false when it is unset
// or not a number of seconds.
func envSeconds(name string) (d time.Duration, ok bool) {
	s := os.Getenv(name)
	if s == "" || s[0] == '.' || strings.Trim(s, "0123456789.") != "" || strings.Count(s, ".") > 1 {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false
	}
	return time.Duration(min(v, 3600) * float64(time.Second)), true
}

// After a refusal the agent waits refusedWait retries, doubling with each
// refusal in a row up to maxRefusedWait: a refused program stays quiet and
// costs the daemon next to nothing, yet registers once there is room.
const (
	refusedWait    = 10
	maxRefusedWait = 300
)

// Agent is this process's connection to the daemon and its registered
// names. One per process is the rule; it is safe for concurrent use.
type Agent struct {
	opts   Options
	cur    atomic.Pointer[ring]
	mu     sync.Mutex // registration and reconnection
	apps   map[string]*App
	appl   []*App
	trans  []*Tran
	byID   map[int32]bool
	done   chan struct{}
	closed bool
	wg     sync.WaitGroup
	inst   atomic.Uint32 // transaction instance numbers for correlators
	agent  uint16
}

// Open starts an agent and tries the daemon once; it never fails: without
// a daemon the agent measures nothing until one appears.
func Open(opts *Options) *Agent {
	a := &Agent{apps: map[string]*App{}, byID: map[int32]bool{}, done: make(chan struct{}), agent: uint16(os.Getpid())}
	if opts != nil {
		a.opts = *opts
	}
	if a.opts.Prog == "" && len(os.Args) > 0 {
		a.opts.Prog = filepath.Base(os.Args[0])
	}
	if a.opts.Retry <= 0 {
		a.opts.Retry = time.Second
		if d, ok := envSeconds("ARM_RETRY"); ok {
			a.opts.Retry = max(d, 10*time.Millisecond) // never a busy loop on the daemon
		}
	}
	if a.opts.Wait <= 0 {
		a.opts.Wait, _ = envSeconds("ARM_CONNECT_WAIT")
	}
	if a.opts.after == nil {
		a.opts.after = time.After
	}
	if a.opts.Disabled || os.Getenv("INVOKE_ARM") == "false" {
		a.opts.Disabled = true
		return a
	}
	res := a.first()
	a.wg.Add(1)
	go a.watch(res)
	return a
}

// first is the first registration: one attempt, or with Wait one every
// Retry until the daemon answers or Wait is over. An attempt may take the
// rest of the wait: a daemon slow to answer is waited for, not given up on.
func (a *Agent) first() int {
	end := time.Now().Add(a.opts.Wait)
	for {
		if res := a.connect(max(ioTimeout, time.Until(end))); res != connNone {
			return res
		}
		left := time.Until(end)
		if left <= 0 {
			return connNone
		}
		<-a.opts.after(min(a.opts.Retry, left))
	}
}

// Connected reports whether a daemon is draining this process's records.
func (a *Agent) Connected() bool { return a.cur.Load() != nil }

// Close disconnects; records not yet drained are lost.
func (a *Agent) Close() {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return
	}
	a.closed = true
	close(a.done)
	r := a.cur.Swap(nil)
	if r != nil {
		r.conn.Close()
	}
	a.mu.Unlock()
	a.wg.Wait()
	if r != nil {
		r.drop() // when watch had not yet started on it
	}
}

func (a *Agent) sockets() []string {
	if a.opts.Socket != "" {
		return []string{a.opts.Socket}
	}
	return Sockets()
}

// Results of connect.
const (
	connNone = iota
	connOK
	connRefused
)

// connect tries each socket; on success it publishes every name into the
// new file, carries over the loss of the previous one, and makes it current.
// A refusal is silent: the program goes on measuring into nothing.
func (a *Agent) connect(timeout time.Duration) int {
	res := connNone
	for _, s := range a.sockets() {
		r, err := dial(s, a.opts.Prog, timeout)
		if err != nil {
			var re *refusedError
			if errors.As(err, &re) {
				res = connRefused
			}
			continue
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.closed {
			r.conn.Close()
			r.drop()
			return connNone
		}
		for i, ap := range a.appl {
			if uint32(i) < r.f.Geometry().Apps {
				r.f.PublishApp(uint32(i), &armring.App{ID: ap.id, Key: ap.key, Descr: ap.descr})
			}
		}
		for i, t := range a.trans {
			if uint32(i) < r.f.Geometry().Trans {
				r.f.PublishTran(uint32(i), &t.entry)
				if n := t.lost.Swap(0); n > 0 {
					r.f.AddDropped(uint32(i), n)
				}
			}
		}
		a.cur.Store(r)
		return connOK
	}
	return res
}

// watch waits for the daemon to go away, then reconnects every Retry, or
// more and more rarely while the daemon refuses.
func (a *Agent) watch(res int) {
	defer a.wg.Done()
	wait := a.opts.Retry
	for {
		if r := a.cur.Load(); r != nil {
			var b [64]byte
			r.conn.Read(b[:]) // returns when the daemon closes or Close is called
			a.cur.CompareAndSwap(r, nil)
			r.conn.Close()
			// Completions the daemon did not take are lost: count them,
			// then let the file go.
			a.mu.Lock()
			for i, t := range a.trans {
				if uint32(i) < r.f.Geometry().Trans {
					t.lost.Add(r.f.Untaken(uint32(i)))
				}
			}
			a.mu.Unlock()
			r.drop()
		}
		switch {
		case res != connRefused:
			wait = a.opts.Retry
		case wait < refusedWait*a.opts.Retry:
			wait = refusedWait * a.opts.Retry
		default:
			wait = min(2*wait, maxRefusedWait*a.opts.Retry)
		}
		select {
		case <-a.done:
			return
		case <-a.opts.after(wait):
		}
		if a.cur.Load() == nil {
			res = a.connect(ioTimeout)
		}
	}
}

// id derives an id from a key, the same in every process; a collision
// within this process takes the next free number.
func (a *Agent) id(key string) int32 {
	h := fnv.New32a()
	h.Write([]byte(key))
	id := int32(h.Sum32()&0x3fffffff) + 1
	for a.byID[id] {
		id = id%0x3fffffff + 1
	}
	a.byID[id] = true
	return id
}
