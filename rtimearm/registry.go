package rtimearm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/perfagent/subagent/client/armring"
	"github.com/perfagent/subagent/spmi"
)

// Limits bound the registry in total and per user, so that one local
// user cannot take what every other program needs (docs/ARM.md). An
// application or transaction counts against the user of the process that
// registered it first; a ring (MaxProcs: a registration's file) against
// the user and PID of the process that received it, until that process
// has exited or maps it no longer (rings.go).
type Limits struct {
	MaxApps, MaxTrans, MaxProcs                   int // in total; MaxProcs 0 is 256
	MaxAppsPerUID, MaxTransPerUID, MaxProcsPerUID int // of one user; 0 is the total
	MaxPerPID                                     int // rings of one process; 0 is DefaultPerPID
	// MaxAppNamesPerUID bounds the application names one user holds in
	// the numbering, live or in their grace period; 0 is no share.
	MaxAppNamesPerUID int
	// AppIdle drops an application no live process holds once it has been
	// idle this long (its numbers are kept); 0 never does.
	AppIdle time.Duration
	// HelloBurst Hellos of one user may reach the limits at once, then
	// HelloRate a second: each may cost a ring. 0: the defaults below.
	HelloRate  float64
	HelloBurst int
}

// DefaultPerPID lets one process hold a ring for the C library and one for
// package arm; one program has no use for more.
const DefaultPerPID = 2

// Defaults of Limits.HelloRate and HelloBurst (arm.hello_rate_per_uid,
// arm.hello_burst_per_uid): a ring costs the daemon about 2.5 ms of page
// faults (BenchmarkCreateFile), so one user's Hellos take at most 64 of
// them at once, then 2.5 % of a CPU.
const (
	DefaultHelloRate  = 10
	DefaultHelloBurst = 64
)

func (l *Limits) fill() {
	if l.MaxProcs <= 0 {
		l.MaxProcs = 256
	}
	for _, f := range []struct{ per, total *int }{
		{&l.MaxAppsPerUID, &l.MaxApps}, {&l.MaxTransPerUID, &l.MaxTrans}, {&l.MaxProcsPerUID, &l.MaxProcs},
	} {
		if *f.per <= 0 || *f.per > *f.total {
			*f.per = *f.total
		}
	}
	if l.MaxPerPID <= 0 {
		l.MaxPerPID = DefaultPerPID
	}
	if l.HelloRate <= 0 {
		l.HelloRate = DefaultHelloRate
	}
	if l.HelloBurst <= 0 {
		l.HelloBurst = DefaultHelloBurst
	}
}

// limitError is a refusal at a configured limit; key names the setting.
type limitError struct{ key, msg string }

func (e *limitError) Error() string { return e.msg }

// Registry is the daemon's view of every ARM process: the applications
// and transactions by key, their statistics, and the live processes whose
// rings it drains. One mutex guards it; draining is bounded per process.
type Registry struct {
	mu       sync.Mutex
	lim      Limits
	weight   float64 // of the previous average, 0..0.99
	span     time.Duration
	log      *slog.Logger
	apps     map[string]*app
	idle     map[*app]bool // applications no live process holds
	ntrans   int
	byUID    map[uint32]*usage
	rings    map[*ring]bool // every ring holding a place (rings.go)
	left     map[*ring]bool // the rings whose registration ended, until released
	byPID    map[int32]int  // rings by the PID that received them
	hellos   map[uint32]*helloBucket
	pruned   time.Time // the last look for departed processes that exited
	ringSize uint64    // of the rings, in bytes
	procs    map[uint64]*proc
	byAgent  map[uint16][]*proc // by PID's low 16 bits, the correlators' agent instance
	departed []*proc            // removed, still in byAgent until the next DrainAll
	nextID   uint64
	errs     uint64 // entries and records refused
	badBuf   uint64 // data buffers the libraries refused
	noSlot   uint64 // instances the libraries could not measure
	refused  uint64 // connections refused
	logged   map[string]bool
	now      func() time.Time
	// /proc, as rings.go reads it (procStart, mapsFile); tests replace them
	startOf  func(pid int32) uint64
	mapsRing func(pid int32, dev, ino uint64) bool
	num      *spmi.Numbering // ASN.1 numbers of transactions
	tot      armring.Totals  // scratch of drains, under mu
	onShape  func()          // an application or a transaction came or went (SetOnShape)
	objs     Objectives      // service level objectives (SetObjectives); nil: none
	calls    edges           // the call graph (calls.go)
}

// SetClock makes now the registry's clock: the time of drains, which
// the windows and the objectives' buckets count in (tests).
func (r *Registry) SetClock(now func() time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.now = now
}

// SetOnShape makes the registry call f when an application or a
// transaction appears or goes (the directory looks at the tree then); f
// is called with the registry's lock held: it must not block.
func (r *Registry) SetOnShape(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.onShape = f
}

// shaped tells onShape. Called with mu held.
func (r *Registry) shaped() {
	if r.onShape != nil {
		r.onShape()
	}
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
	lim.fill()
	return &Registry{lim: lim, weight: float64(weight) / 100, span: span, log: log, num: num,
		apps: map[string]*app{}, idle: map[*app]bool{}, byUID: map[uint32]*usage{}, byPID: map[int32]int{},
		rings: map[*ring]bool{}, left: map[*ring]bool{}, hellos: map[uint32]*helloBucket{},
		procs: map[uint64]*proc{}, byAgent: map[uint16][]*proc{}, logged: map[string]bool{}, now: time.Now,
		startOf: procStart, mapsRing: mapsFile}
}

// Limits returns the limits in force, defaults filled in.
func (r *Registry) Limits() Limits { return r.lim }

// SetWeight changes the weight of respavg (a reload).
func (r *Registry) SetWeight(percent int) {
	r.mu.Lock()
	r.weight = float64(percent) / 100
	r.mu.Unlock()
}

func (r *Registry) use(uid uint32) *usage {
	u := r.byUID[uid]
	if u == nil {
		u = &usage{}
		r.byUID[uid] = u
	}
	return u
}

// unuse forgets a user who holds nothing, so the map stays small.
func (r *Registry) unuse(uid uint32) {
	if u := r.byUID[uid]; u != nil && *u == (usage{}) {
		delete(r.byUID, uid)
	}
}

// refuse counts an error from a process and logs it once per user and
// kind: a process that makes up new names or bad entries in a loop
// cannot flood the log.
func (r *Registry) refuse(p *proc, kind string, err error) {
	r.errs++
	var le *limitError
	if errors.As(err, &le) {
		kind = le.key
	}
	k := fmt.Sprintf("%d %s", p.uid, kind)
	if !r.logged[k] && len(r.logged) < 1000 {
		r.logged[k] = true
		r.log.Warn("arm: refused "+kind+" (logged once per user)", "uid", p.uid, "pid", p.pid, "prog", p.prog, "err", err.Error())
	}
}

func (r *Registry) appFor(p *proc, a *armring.App) (*app, error) {
	if x := r.apps[a.Key]; x != nil {
		return x, nil
	}
	if len(r.apps) >= r.lim.MaxApps {
		return nil, &limitError{"arm.max_applications", fmt.Sprintf("application %q: the limit of %d applications (arm.max_applications) is reached", a.Key, r.lim.MaxApps)}
	}
	u := r.use(p.uid)
	if u.apps >= r.lim.MaxAppsPerUID {
		r.unuse(p.uid)
		return nil, &limitError{"arm.max_applications_per_uid", fmt.Sprintf("application %q: uid %d has %d applications, the limit (arm.max_applications_per_uid)", a.Key, p.uid, r.lim.MaxAppsPerUID)}
	}
	if err := r.numberApp(p, a.Key); err != nil {
		r.unuse(p.uid)
		return nil, err
	}
	u.apps++
	x := &app{key: a.Key, descr: a.Descr, uid: p.uid, trans: map[string]*tran{}}
	r.apps[a.Key] = x
	r.log.Info("arm: new application", "app", a.Key, "pid", p.pid, "uid", p.uid)
	r.shaped()
	return x, nil
}

// numberApp gives a new application its number now, counted against its
// user's share of the names (Limits.MaxAppNamesPerUID): at the numbering's
// limits it is refused here, with the setting's name, rather than left
// out of the tree.
func (r *Registry) numberApp(p *proc, key string) error {
	share := r.lim.MaxAppNamesPerUID
	if share <= 0 {
		share = math.MaxInt
	}
	_, err := r.num.AssignShare(Root, key, ownStat, fmt.Sprintf("uid %d", p.uid), share, "arm.max_application_names_per_uid")
	switch {
	case errors.Is(err, spmi.ErrShareFull):
		return &limitError{"arm.max_application_names_per_uid", fmt.Sprintf("application %q: %v", key, err)}
	case err != nil:
		return &limitError{"state.max_names_per_context", fmt.Sprintf("application %q: %v", key, err)}
	}
	return nil
}

// ownStat tells the numbers of RTime/ARM's own statistics, which no
// application may take.
func ownStat(k uint32) bool {
	for _, d := range armStats {
		if d.ASN == k {
			return true
		}
	}
	return false
}

func (r *Registry) tranFor(p *proc, ap *app, t *armring.Tran) (*tran, error) {
	if x := ap.trans[t.Key]; x != nil {
		return x, nil
	}
	if r.ntrans >= r.lim.MaxTrans {
		return nil, &limitError{"arm.max_transactions", fmt.Sprintf("transaction %s/%s: the limit of %d transactions (arm.max_transactions) is reached", ap.key, t.Key, r.lim.MaxTrans)}
	}
	u := r.use(p.uid)
	if u.trans >= r.lim.MaxTransPerUID {
		r.unuse(p.uid)
		return nil, &limitError{"arm.max_transactions_per_uid", fmt.Sprintf("transaction %s/%s: uid %d has %d transactions, the limit (arm.max_transactions_per_uid)", ap.key, t.Key, p.uid, r.lim.MaxTransPerUID)}
	}
	u.trans++
	x := &tran{app: ap, uid: p.uid, key: t.Key, descr: t.Descr, detail: t.Detail, types: t.Types, names: t.Names}
	r.matchTran(x)
	ap.trans[t.Key] = x
	ap.order = append(ap.order, x)
	r.ntrans++
	r.shaped()
	return x, nil
}

// hold and release count the live processes that use an application; one
// no process holds is idle from then on, and evicted after Limits.AppIdle.
func (r *Registry) hold(x *app) {
	if x.live++; x.live == 1 {
		delete(r.idle, x)
	}
}

func (r *Registry) release(x *app, now time.Time) {
	if x.live--; x.live <= 0 && !x.gone {
		x.live, x.idleSince = 0, now
		r.idle[x] = true
	}
}

// drop removes an application and its transactions, freeing their place
// in the limits. Their ASN.1 numbers stay in the numberings, so a name
// that comes back is served at the same OID. A live process that still
// posts for it re-creates it (proc.rebind).
func (r *Registry) drop(x *app) {
	delete(r.apps, x.key)
	delete(r.idle, x)
	x.gone = true
	if u := r.byUID[x.uid]; u != nil {
		u.apps--
		r.unuse(x.uid)
	}
	for _, t := range x.order {
		r.ntrans--
		if u := r.byUID[t.uid]; u != nil {
			u.trans--
			r.unuse(t.uid)
		}
	}
	for _, p := range r.procs {
		delete(p.held, x)
	}
	r.dropEdges(x)
	r.shaped()
}

// evict drops the applications idle for Limits.AppIdle.
func (r *Registry) evict(now time.Time) {
	if r.lim.AppIdle <= 0 {
		return
	}
	for x := range r.idle {
		if now.Sub(x.idleSince) >= r.lim.AppIdle {
			r.drop(x)
			r.log.Info("arm: idle application dropped", "app", x.key, "idle", r.lim.AppIdle)
		}
	}
}

// DeleteApp drops an application and its transactions at once (subagent
// delete); false when there is none by that key.
func (r *Registry) DeleteApp(key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	x := r.apps[key]
	if x == nil {
		return false
	}
	// Records posted before the delete go with it; only later ones re-create it.
	now := r.now()
	for _, p := range r.procs {
		p.drain(r, now)
	}
	if x.gone {
		return true
	}
	r.drop(x)
	return true
}

// DrainAll drains every live process, then releases the rings of
// departed ones that have exited.
func (r *Registry) DrainAll() {
	r.mu.Lock()
	now := r.now()
	for _, p := range r.procs {
		p.drain(r, now)
	}
	r.evict(now)
	r.forgetDeparted() // what was posted while they lived is drained by now
	r.mu.Unlock()
	r.pruneGone()
}

// scanNow reads the new entries of a live process at once, so that its
// library learns the verdict on an application without waiting for the
// next drain.
func (r *Registry) scanNow(p *proc) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.procs[p.id] == p {
		p.scan(r)
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

// add and remove keep procs and byAgent together. A removed process
// stays in byAgent until the next DrainAll has run: a child that posts
// just after its parent exited (a forked worker) still finds the parent's
// name.
func (r *Registry) add(p *proc) {
	r.procs[p.id] = p
	r.byAgent[uint16(p.pid)] = append(r.byAgent[uint16(p.pid)], p)
}

func (r *Registry) remove(p *proc) bool {
	if r.procs[p.id] != p {
		return false
	}
	delete(r.procs, p.id)
	r.departed = append(r.departed, p)
	return true
}

// forgetDeparted drops the processes removed before the last drain from byAgent.
func (r *Registry) forgetDeparted() {
	for _, p := range r.departed {
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
	}
	r.departed = nil
}
