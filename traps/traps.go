// Package traps sends SNMP notifications directly to configured
// destinations with gosnmp: SNMPv1 traps, SNMPv2c traps and informs, and
// SNMPv3 traps and informs with authentication and privacy. It is what a
// standalone daemon uses; under a master agent the master's own sinks
// apply as well.
//
// Sending never blocks the caller: each destination has a bounded queue
// and a worker; a full queue drops the notification and counts it, and a
// destination that is down, slow or refusing only delays its own worker.
// Failures are counted and logged once per change of a destination's
// state.
package traps

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/usm"
)

// VarBind is one variable of a notification.
type VarBind struct {
	OID   asn1tree.OID
	Value asn1tree.Value
}

// Notification is what is sent. In SNMPv2 and v3 its snmpTrapOID.0 is
// Enterprise.0.Specific; in SNMPv1 it is an enterprise-specific trap
// (generic 6) of Enterprise with that specific number (RFC 3584). One
// holding a Counter64 is refused (counted failed) by SNMPv1 destinations,
// as RFC 3584 3.2 has it.
type Notification struct {
	Enterprise asn1tree.OID
	Specific   int
	Uptime     time.Duration // sysUpTime.0 (the v1 time-stamp)
	Vars       []VarBind     // after sysUpTime.0 and snmpTrapOID.0
	// LogIndex is the notification's entry in the notification log
	// (notiflog), handed back to Report; 0: not logged.
	LogIndex uint32
}

// Report is told what became of a notification at destination d: nil
// when it went out (a trap: handed to the kernel, unconfirmed; an inform:
// acknowledged, after the destination's retries), else why not
// (ErrDropped for a full queue). A trap reported sent is reported a
// second time, failed, when an ICMP error shows it was lost (port
// unreachable, ...). It is called from the destination's worker (or
// Send) and must not block.
type Report func(n *Notification, d Dest, err error)

// ErrDropped is reported for a notification dropped because the
// destination's queue was full.
var ErrDropped = errors.New("dropped: the destination's queue is full")

// TrapOID is the notification's snmpTrapOID.0 value.
func (n *Notification) TrapOID() asn1tree.OID {
	return n.Enterprise.Append(0, uint32(n.Specific))
}

// Counts are the totals over all destinations.
type Counts struct {
	Sent    uint64 // traps handed to the kernel, informs acknowledged
	Failed  uint64 // sends that failed or were not acknowledged, and traps sent then found lost (ICMP)
	Dropped uint64 // notifications dropped because a queue was full
	Down    int    // destinations whose last send failed
}

// Sender delivers notifications to its destinations.
type Sender struct {
	report Report
	dests  []*worker
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// New checks the destinations and starts one worker each; Close stops
// them. SNMPv3 traps are sent from eng, the agent's engine (ID, boots and
// time); without one (no ID) v3 destinations are refused.
func New(dests []Dest, eng usm.Engine, log *slog.Logger) (*Sender, error) {
	return NewReporting(dests, eng, log, nil)
}

// NewReporting is New with a Report of every send's outcome (nil: none).
func NewReporting(dests []Dest, eng usm.Engine, log *slog.Logger, report Report) (*Sender, error) {
	for i, d := range dests {
		if d.Version == "v3" && len(eng.ID) == 0 {
			return nil, fmt.Errorf("trap destination %d (%s): SNMPv3 needs the agent's SNMPv3 engine, which is off", i+1, d.Address)
		}
	}
	dial := func(d Dest) (link, error) {
		c, err := dial(d, eng)
		if err != nil {
			return nil, err // not a nil *conn in a non-nil link
		}
		return c, nil
	}
	return newSender(dests, log, dial, report)
}

// link is one destination's transport: gosnmp over UDP, or a fake in tests.
type link interface {
	send(n Notification) error
	// takeLost returns the traps sent earlier that were found lost since
	// the last call, looking for more first if drain; waiting tells
	// whether some may still be.
	takeLost(drain bool) []lost
	waiting() bool
	close()
}

// lostCheck is how often a worker with traps waiting for an ICMP error
// and nothing to send looks for one.
const lostCheck = 100 * time.Millisecond

func newSender(dests []Dest, log *slog.Logger, dial func(Dest) (link, error), report Report) (*Sender, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if report == nil {
		report = func(*Notification, Dest, error) {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Sender{cancel: cancel, report: report}
	for i := range dests {
		d, err := dests[i].norm()
		if err != nil {
			cancel()
			return nil, fmt.Errorf("trap destination %d (%s): %w", i+1, dests[i].Address, err)
		}
		w := &worker{d: d, q: make(chan Notification, d.Queue), dial: dial, log: log.With("trap_destination", d.String()), report: report}
		s.dests = append(s.dests, w)
	}
	for _, w := range s.dests {
		s.wg.Add(1)
		go func() { defer s.wg.Done(); w.run(ctx) }()
	}
	return s, nil
}

// Send queues n for every destination without waiting.
func (s *Sender) Send(n Notification) {
	for _, w := range s.dests {
		select {
		case w.q <- n:
		default:
			w.dropped.Add(1)
			s.report(&n, w.d, ErrDropped)
		}
	}
}

// Counts sums the destinations' counters.
func (s *Sender) Counts() Counts {
	var c Counts
	for _, w := range s.dests {
		c.Sent += w.sent.Load()
		c.Failed += w.failed.Load()
		c.Dropped += w.dropped.Load()
		if w.down.Load() {
			c.Down++
		}
	}
	return c
}

// Len is the number of destinations.
func (s *Sender) Len() int { return len(s.dests) }

// Close stops the workers; a send in flight ends within its timeout and
// what is still queued is dropped.
func (s *Sender) Close() {
	s.cancel()
	s.wg.Wait()
}

type worker struct {
	d      Dest
	q      chan Notification
	dial   func(Dest) (link, error)
	log    *slog.Logger
	report Report

	sent, failed, dropped atomic.Uint64
	down                  atomic.Bool
	warned64              bool // logged a Counter64 refused in SNMPv1; run's goroutine only
	// A destination down for traps found lost (ICMP) is up again only
	// once a trap sent since has outlived its wait for an ICMP error
	// (unconfirmed): sending a trap proves nothing. run's goroutine only.
	lostDown, upPending bool
}

var errCounter64 = errors.New("not sent: SNMPv1 cannot carry its Counter64 (RFC 3584)")

// v1Untranslatable tells whether n holds a Counter64, which makes it
// untranslatable to SNMPv1 (RFC 3584 3.2).
func v1Untranslatable(n Notification) bool {
	for _, vb := range n.Vars {
		if vb.Value.Kind == asn1tree.Counter64 {
			return true
		}
	}
	return false
}

func (w *worker) run(ctx context.Context) {
	var c link
	defer func() {
		if c != nil {
			c.close()
		}
	}()
	check := time.NewTimer(lostCheck)
	defer check.Stop()
	for {
		if c != nil && c.waiting() {
			check.Reset(lostCheck)
		} else {
			check.Stop()
			if w.upPending {
				w.lostDown, w.upPending = false, false
				w.up()
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-check.C:
			w.takeLost(c, true)
		case n := <-w.q:
			if ctx.Err() != nil {
				return // Close: select may pick the queue over Done, which drops it
			}
			if w.d.Version == "v1" && v1Untranslatable(n) {
				// A fault of the notification, not of the destination.
				w.failed.Add(1)
				w.report(&n, w.d, errCounter64)
				if !w.warned64 {
					w.warned64 = true
					w.log.Warn("notification holding Counter64 not sent: SNMPv1 cannot carry it (RFC 3584)", "trap_oid", n.TrapOID().String())
				}
				continue
			}
			var err error
			if c == nil {
				c, err = w.dial(w.d)
			}
			if err == nil {
				err = c.send(n)
			}
			if err == nil && !w.d.Inform && w.lostDown {
				w.sent.Add(1) // unconfirmed: still down
				w.upPending = true
			} else {
				w.result(err)
			}
			w.report(&n, w.d, err)
			if c != nil {
				w.takeLost(c, err != nil) // found by the writes; all before a close
			}
			if err != nil && c != nil {
				c.close() // an inform not acknowledged: start afresh
				c = nil
			}
		}
	}
}

// takeLost reports the traps c found lost, each on its own notification.
func (w *worker) takeLost(c link, drain bool) {
	if c == nil {
		return
	}
	for _, l := range c.takeLost(drain) {
		w.result(l.err)
		w.lostDown, w.upPending = true, false
		w.report(&l.n, w.d, l.err)
	}
}

// up marks the destination up, logging the change.
func (w *worker) up() {
	if w.down.Swap(false) {
		w.log.Info("trap destination reachable again")
	}
}

// result counts a send and logs when the destination's state changes.
func (w *worker) result(err error) {
	if err == nil {
		w.sent.Add(1)
		w.lostDown, w.upPending = false, false
		w.up()
		return
	}
	w.failed.Add(1)
	if !w.down.Swap(true) {
		w.log.Warn("trap destination failing; notifications to it are lost until it answers", "err", err)
	}
}
