package rtimearm

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/perfagent/subagent/armring"
	"github.com/perfagent/subagent/spmi"
)

// Limits bound the registry: applications and transactions over all
// processes (beyond them new names are refused and counted).
type Limits struct {
	MaxApps  int
	MaxTrans int
}

// Registry is the daemon's view of every ARM process: the applications
// and transactions by key, their statistics, and the live processes whose
// rings it drains. One mutex guards it; draining is bounded per process.
type Registry struct {
	mu      sync.Mutex
	lim     Limits
	weight  float64 // of the previous average, 0..0.99
	span    time.Duration
	log     *slog.Logger
	apps    map[string]*app
	ntrans  int
	procs   map[uint64]*proc
	byAgent map[uint16][]*proc // by PID's low 16 bits, the correlators' agent instance
	nextID  uint64
	errs    uint64 // entries and records refused
	badBuf  uint64 // data buffers the libraries refused
	noSlot  uint64 // instances the libraries could not measure
	refused uint64 // connections refused
	logged  map[string]bool
	now     func() time.Time
	num     *spmi.Numbering // ASN.1 numbers of transactions
}

// NewRegistry returns an empty registry. weight is the percentage the
// previous average keeps in respavg; span is the rate and percentile
// window; num keeps the transactions' ASN.1 numbers (nil: in memory).
func NewRegistry(lim Limits, weight int, span time.Duration, num *spmi.Numbering, log *slog.Logger) *Registry {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if num == nil {
		num = spmi.NewNumbering("")
	}
	return &Registry{lim: lim, weight: float64(weight) / 100, span: span, log: log, num: num,
		apps: map[string]*app{}, procs: map[uint64]*proc{}, byAgent: map[uint16][]*proc{}, logged: map[string]bool{}, now: time.Now}
}

// SetWeight changes the weight of respavg (a reload).
func (r *Registry) SetWeight(percent int) {
	r.mu.Lock()
	r.weight = float64(percent) / 100
	r.mu.Unlock()
}

// refuse counts an error from a process and logs each kind once.
func (r *Registry) refuse(p *proc, err error) {
	r.errs++
	msg := err.Error()
	if !r.logged[msg] && len(r.logged) < 1000 {
		r.logged[msg] = true
		r.log.Warn("arm: refused", "pid", p.pid, "prog", p.prog, "err", msg)
	}
}

func (r *Registry) appFor(p *proc, a *armring.App) (*app, error) {
	if x := r.apps[a.Key]; x != nil {
		return x, nil
	}
	if len(r.apps) >= r.lim.MaxApps {
		return nil, fmt.Errorf("application %q: the limit of %d applications (arm.max_applications) is reached", a.Key, r.lim.MaxApps)
	}
	x := &app{key: a.Key, descr: a.Descr, trans: map[string]*tran{}}
	r.apps[a.Key] = x
	r.log.Info("arm: new application", "app", a.Key, "pid", p.pid)
	return x, nil
}

func (r *Registry) tranFor(ap *app, t *armring.Tran) (*tran, error) {
	if x := ap.trans[t.Key]; x != nil {
		return x, nil
	}
	if r.ntrans >= r.lim.MaxTrans {
		return nil, fmt.Errorf("transaction %s/%s: the limit of %d transactions (arm.max_transactions) is reached", ap.key, t.Key, r.lim.MaxTrans)
	}
	x := &tran{app: ap, key: t.Key, descr: t.Descr, detail: t.Detail, types: t.Types, names: t.Names}
	ap.trans[t.Key] = x
	ap.order = append(ap.order, x)
	r.ntrans++
	return x, nil
}

// DrainAll drains every live process.
func (r *Registry) DrainAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	for _, p := range r.procs {
		p.drain(r, now)
	}
}

// DrainEvery drains every live process each interval until ctx is done:
// the daemon's loop, and the benchmarks'.
func (r *Registry) DrainEvery(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.DrainAll()
		}
	}
}

// sortedApps lists the applications by key.
func (r *Registry) sortedApps() []*app {
	out := make([]*app, 0, len(r.apps))
	for _, a := range r.apps {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}

// add and remove keep procs and byAgent together.
func (r *Registry) add(p *proc) {
	r.procs[p.id] = p
	r.byAgent[uint16(p.pid)] = append(r.byAgent[uint16(p.pid)], p)
}

func (r *Registry) remove(p *proc) bool {
	if r.procs[p.id] != p {
		return false
	}
	delete(r.procs, p.id)
	a := r.byAgent[uint16(p.pid)]
	for i, q := range a {
		if q == p {
			a = append(a[:i:i], a[i+1:]...)
			break
		}
	}
	if len(a) == 0 {
		delete(r.byAgent, uint16(p.pid))
	} else {
		r.byAgent[uint16(p.pid)] = a
	}
	return true
}
