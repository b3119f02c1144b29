package arm

import (
	"errors"
	"os/user"
	"sync/atomic"
	"time"

	"github.com/perfagent/subagent/client/armring"
)

// Status is a transaction's completion status (arm_stop's tran_status).
type Status uint8

// The completion statuses of ARM 2.0.
const (
	Good   Status = armring.Good
	Abort  Status = armring.Abort
	Failed Status = armring.Failed
)

// MetricType is an application-defined metric's type (meta-data format 101).
type MetricType uint32

// The metric types of ARM 2.0; String32 is only for the string field.
const (
	Counter32   MetricType = armring.Counter32
	Counter64   MetricType = armring.Counter64
	CntrDivr32  MetricType = armring.CntrDivr32
	Gauge32     MetricType = armring.Gauge32
	Gauge64     MetricType = armring.Gauge64
	GaugeDivr32 MetricType = armring.GaugeDivr32
	NumericID32 MetricType = armring.NumericID32
	NumericID64 MetricType = armring.NumericID64
	String8     MetricType = armring.String8
	String32    MetricType = armring.String32
)

// Metric declares one of the six metric fields (Field 1..6) or the string
// field (Field 7, type String32).
type Metric struct {
	Field int
	Type  MetricType
	Name  string
}

// App is a registered application (arm_init).
type App struct {
	a          *Agent
	id         int32
	key, descr string
	user       string
	uses       int
	index      uint32
	trans      map[string]*Tran
}

// App registers an application by name, as arm_init: the key is the name
// without blanks cut to 31 bytes. Registering the same name again returns
// the same App with its use count raised. user "*" is the login user. A
// name without a key returns nil, on which every method is a no-op.
func (a *Agent) App(name, userName string) *App {
	if a.opts.Disabled {
		return nil
	}
	key := armring.Key(name)
	if key == "" {
		return nil
	}
	if userName == "*" {
		if u, err := user.Current(); err == nil {
			userName = u.Username
		}
	}
	a.mu.Lock()
	ap := a.apps[key]
	if ap != nil {
		ap.uses++
	} else {
		ap = &App{a: a, id: a.id("A\x00" + key), key: key, descr: armring.Descr(name, armring.MaxDescr),
			user: userName, uses: 1, index: uint32(len(a.appl)), trans: map[string]*Tran{}}
		a.apps[key] = ap
		a.appl = append(a.appl, ap)
		if r := a.cur.Load(); r != nil && ap.index < r.f.Geometry().Apps {
			r.f.PublishApp(ap.index, &armring.App{ID: ap.id, Key: key, Descr: ap.descr})
		}
	}
	a.mu.Unlock()
	if ap.awaitVerdict(a.opts.Wait) == armring.VerdictRefused {
		ap.a.mu.Lock()
		if ap.uses > 0 {
			ap.uses-- // a refused registration holds nothing: no End follows
		}
		ap.a.mu.Unlock()
	}
	return ap
}

// ErrRefused is App.Err of an application the daemon refused at one of
// its limits (arm.max_applications, arm.max_applications_per_uid,
// state.max_names_per_context, arm.max_application_names_per_uid): arm_init's
// and arm_getid's -5 in C. Its transactions are nil and measure nothing.
var ErrRefused = errors.New("arm: the daemon refused the application at one of its limits")

// verdict is the daemon's answer to the application's entry in the
// current file; VerdictNone without a daemon or before it has read it.
func (ap *App) verdict() int32 {
	r := ap.a.cur.Load()
	if r == nil || ap.index >= r.f.Geometry().Apps {
		return armring.VerdictNone
	}
	return r.f.AppVerdict(ap.index)
}

// awaitVerdict asks the daemon to read the new entry now and waits up to
// wait (Options.Wait, ARM_CONNECT_WAIT) for its answer, as arm_init does.
func (ap *App) awaitVerdict(wait time.Duration) int32 {
	end := time.Now().Add(wait)
	var asked *ring
	for {
		r := ap.a.cur.Load()
		v := ap.verdict()
		if r == nil || v != armring.VerdictNone || !time.Now().Before(end) || ap.index >= r.f.Geometry().Apps {
			return v
		}
		if r != asked {
			asked = r
			r.conn.SetWriteDeadline(time.Now().Add(time.Second))
			if _, err := r.conn.Write([]byte{armring.ScanNow}); err != nil {
				return v
			}
		}
		time.Sleep(time.Millisecond)
	}
}

// Err is ErrRefused when the daemon has refused the application, nil
// otherwise (registered, not read yet, or no daemon). With Options.Wait
// (ARM_CONNECT_WAIT), App waits for the daemon's answer before it returns.
func (ap *App) Err() error {
	if ap != nil && ap.verdict() == armring.VerdictRefused {
		return ErrRefused
	}
	return nil
}

// ID is the application's id (arm_init's return): armring.VerdictRefused
// (-5) once the daemon has refused it.
func (ap *App) ID() int32 {
	if ap == nil {
		return -1
	}
	if ap.verdict() == armring.VerdictRefused {
		return armring.VerdictRefused
	}
	return ap.id
}

// End lowers the use count (arm_end); at zero the application and its
// transactions are inactive until registered again.
func (ap *App) End() {
	if ap == nil {
		return
	}
	ap.a.mu.Lock()
	defer ap.a.mu.Unlock()
	if ap.uses > 0 {
		ap.uses--
	}
	if ap.uses == 0 {
		for _, t := range ap.trans {
			t.active.Store(false)
		}
	}
}

// Tran is a registered transaction class (arm_getid).
type Tran struct {
	app    *App
	index  uint32
	entry  armring.Tran
	active atomic.Bool
	lost   atomic.Uint64 // ended while no daemon was connected
}

// Transaction registers a transaction class of ap, as arm_getid: the same
// name returns the same Tran, re-activated; the detail and the metric
// declarations of the first registration stay. Metrics with a bad field
// or type are left out.
func (ap *App) Transaction(name, detail string, metrics ...Metric) *Tran {
	if ap == nil {
		return nil
	}
	key := armring.Key(name)
	a := ap.a
	a.mu.Lock()
	defer a.mu.Unlock()
	if key == "" || ap.uses == 0 || ap.verdict() == armring.VerdictRefused {
		return nil
	}
	if t := ap.trans[key]; t != nil {
		t.active.Store(true)
		return t
	}
	t := &Tran{app: ap, index: uint32(len(a.trans))}
	t.entry = armring.Tran{App: ap.index, ID: a.id("T\x00" + ap.key + "\x00" + key), Key: key,
		Descr: armring.Descr(name, armring.MaxDescr), Detail: armring.Descr(detail, armring.MaxDetail)}
	for _, m := range metrics {
		i := m.Field - 1
		if i < 0 || i >= armring.NumFields || !armring.ValidType(i, uint32(m.Type)) {
			continue
		}
		t.entry.Types[i] = uint32(m.Type)
		t.entry.Names[i] = armring.Descr(m.Name, armring.MaxMetric)
	}
	t.active.Store(true)
	ap.trans[key] = t
	a.trans = append(a.trans, t)
	if r := a.cur.Load(); r != nil && t.index < r.f.Geometry().Trans {
		r.f.PublishTran(t.index, &t.entry)
	}
	return t
}

// ID is the transaction's id (arm_getid's return).
func (t *Tran) ID() int32 {
	if t == nil {
		return -1
	}
	return t.entry.ID
}

// epoch anchors the monotonic clock of handles.
var epoch = time.Now()

func now() int64 { return int64(time.Since(epoch)) }

// Handle is one transaction instance (arm_start's start handle). It is a
// value: keep it on the stack and pass a pointer to Update and Stop.
type Handle struct {
	t      *Tran
	r      *ring
	start  int64
	inst   uint32
	flags  uint8
	parent Correlator
	mask   uint8
	first  [armring.NumMetrics]uint64
	vals   [armring.NumMetrics]uint64
	str    [32]byte
}

// Start begins an instance. On a nil or inactive transaction the handle
// is a no-op.
func (t *Tran) Start() Handle {
	if t == nil || !t.active.Load() {
		return Handle{}
	}
	h := Handle{t: t, start: now()}
	if h.r = t.app.a.cur.Load(); h.r != nil && t.index < h.r.f.Geometry().Trans {
		h.r.f.AddInflight(t.index, 1)
	} else {
		h.r = nil
	}
	return h
}

// Valid reports whether the handle measures something.
func (h *Handle) Valid() bool { return h.t != nil }

// Set gives metric field (1..6) a value: counters as their running total
// (the instance is charged stop minus first value), gauges and ids as
// they are. Values of undeclared fields are ignored.
func (h *Handle) Set(field int, v uint64) {
	i := field - 1
	if h.t == nil || i < 0 || i >= armring.NumMetrics || h.t.entry.Types[i] == 0 {
		return
	}
	if h.mask&(1<<i) == 0 {
		h.first[i] = v
	}
	h.vals[i], h.mask = v, h.mask|1<<i
}

// SetString gives the string field (field 7) a value, blank-padded to 32 bytes.
func (h *Handle) SetString(s string) {
	if h.t == nil || h.t.entry.Types[armring.NumMetrics] == 0 {
		return
	}
	n := copy(h.str[:], s)
	for i := n; i < len(h.str); i++ {
		h.str[i] = ' '
	}
	h.mask |= 1 << armring.NumMetrics
}

// Stop ends the instance with status: its response time goes to the
// transaction's totals in the file; metric values and a parent's
// correlator, which need the single instance, also go to the ring.
func (h *Handle) Stop(s Status) {
	t := h.t
	if t == nil {
		return
	}
	h.t = nil
	dur := uint64(max(now()-h.start, 0))
	if h.r != nil {
		h.r.f.AddInflight(t.index, -1)
	}
	r := t.app.a.cur.Load()
	switch {
	case r == nil:
		t.lost.Add(1)
		return
	case t.index >= r.f.Geometry().Trans:
		r.f.AddNoSlot()
		return
	}
	r.f.Complete(t.index, uint8(min(s, Failed)), dur)
	if h.mask != 0 || h.flags&armring.FlagParent != 0 {
		h.post(r, t, s, dur)
	}
}

// Report adds an instance measured elsewhere, which took d and ended
// with status s (as ARM 4.0's arm_report_transaction): it is counted as
// one that Start and Stop measured, without metric values or a parent.
func (t *Tran) Report(s Status, d time.Duration) {
	if t == nil || !t.active.Load() {
		return
	}
	r := t.app.a.cur.Load()
	switch {
	case r == nil:
		t.lost.Add(1)
	case t.index >= r.f.Geometry().Trans:
		r.f.AddNoSlot()
	default:
		r.f.Complete(t.index, uint8(min(s, Failed)), uint64(max(d, 0)))
	}
}

// post sends the instance's details as a record; a full ring drops them
// and counts them in lost.
func (h *Handle) post(r *ring, t *Tran, s Status, dur uint64) {
	rec := armring.Record{Tran: t.index, Status: uint8(min(s, Failed)), Dur: dur,
		Flags: h.flags, Mask: h.mask, Str: h.str}
	if h.flags&armring.FlagParent != 0 {
		rec.ParentTran, rec.ParentInst, rec.ParentAgent, rec.ParentVendor = h.parent.fields()
	}
	for i := range armring.NumMetrics {
		if h.mask&(1<<i) == 0 {
			continue
		}
		switch MetricType(t.entry.Types[i]) {
		case Counter32:
			rec.Values[i] = uint64(uint32(h.vals[i]) - uint32(h.first[i]))
		case Counter64:
			rec.Values[i] = h.vals[i] - h.first[i]
		case CntrDivr32:
			rec.Values[i] = uint64(uint32(h.vals[i])-uint32(h.first[i])) | h.vals[i]&^0xffffffff
		default:
			rec.Values[i] = h.vals[i]
		}
	}
	if !r.f.Post(&rec) {
		r.f.AddDropped(t.index, 1)
	}
}
