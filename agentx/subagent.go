package agentx

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/internal/foldlog"
	"github.com/perfagent/subagent/snmpreq"
)

// Subagent serves a View to an AgentX master. Create it with New and keep it
// connected with Run; Notify may be called from any goroutine.
type Subagent struct {
	cfg              Config
	network, address string
	regs             []Registration // Subtrees and Registrations, in order
	scope            *scope
	src              asn1tree.Source
	walks            asn1tree.Walks[uint64] // by session
	sessions         atomic.Uint64          // sessions opened: each one's number among the walks
	ages             asn1tree.DataAges
	log              *slog.Logger
	setLog           *foldlog.Log // failed Sets, folded across sessions
	running          atomic.Bool
	// dial connects to the master; tests replace it with an in-memory
	// pipe whose deadlines run on their own clock.
	dial func(ctx context.Context, network, address string) (net.Conn, error)

	mu  sync.Mutex
	cur *session      // open and registered, else nil
	up  chan struct{} // closed while cur is set
}

// New checks cfg and returns a Subagent that answers from view. view is
// called once per SNMP request (transactionID), apart from the socket
// reader (package doc): it may wait, but the master gives up on a
// request after its timeout (net-snmp: 1 s).
// Without moments to go back to, the requests of one walk may see
// different snapshots: NewWithSource keeps walks consistent.
func New(cfg Config, view func() asn1tree.View) (*Subagent, error) {
	if view == nil {
		return nil, errors.New("agentx: New needs a view function")
	}
	return NewWithSource(cfg, asn1tree.Latest(view))
}

// NewWithSource is New answering from src: a new transaction from
// src(nil), except that one whose GetNext or GetBulk goes on from where a
// response of the session ended (asn1tree.Walks: all managers behind the
// master share the session) is answered from that response's moment, on
// the socket reader: src with a moment must return at once. src(nil) is
// called like New's view.
func NewWithSource(cfg Config, src asn1tree.Source) (*Subagent, error) {
	if src == nil {
		return nil, errors.New("agentx: NewWithSource needs a view source")
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	network, address, _ := ParseAddress(cfg.Address)
	regs := cfg.registrations()
	d := &net.Dialer{Timeout: cfg.RequestTimeout}
	a := &Subagent{cfg: cfg, network: network, address: address, regs: regs, scope: newScope(regs),
		src: src, log: cfg.Logger, setLog: foldlog.New(cfg.Logger, slog.LevelInfo), dial: d.DialContext, up: make(chan struct{})}
	a.walks.Budget, a.walks.Shared = cfg.WalkBudget, cfg.SharedWalks
	return a, nil
}

// WalkFallbacks is how many walks fell back to the current moment for
// the walks' memory budget (Config.WalkBudget).
func (a *Subagent) WalkFallbacks() uint64 { return a.walks.FellBack() }

// DataAge returns how old the data of the answers was, for views that
// tell (asn1tree.DataTimer): the last answer's, and the largest of the
// last 30 to 60 seconds.
func (a *Subagent) DataAge() (last, largest time.Duration) { return a.ages.Get(time.Now()) }

// Connected reports whether a session is open and everything registered.
func (a *Subagent) Connected() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.cur != nil
}

// Run connects to the master and keeps the session alive until ctx ends:
// a lost session is dialed, opened and registered again after a backoff.
// On return the session was closed (Unregister, Close) and every goroutine
// Run started has exited. Run returns nil once ctx ends; it fails only if
// it is already running.
func (a *Subagent) Run(ctx context.Context) error {
	if !a.running.CompareAndSwap(false, true) {
		return errors.New("agentx: Run is already running")
	}
	defer a.running.Store(false)
	delay := a.cfg.BackoffMin
	seen := map[string]bool{} // errors logged during this outage
	for {
		established, err := a.runSession(ctx)
		if ctx.Err() != nil {
			a.log.Info("agentx: subagent stopped", "address", a.cfg.Address)
			return nil
		}
		switch {
		case established != nil:
			// A session that lived resets the backoff; one that died at
			// once (a flapping master) does not.
			if time.Since(*established) > a.cfg.BackoffMax {
				delay = a.cfg.BackoffMin
			}
			a.log.Warn("agentx: session lost, reconnecting", "address", a.cfg.Address, "err", err)
			clear(seen)
		case !seen[err.Error()] && len(seen) < maxLoggedErrors:
			// Once per kind of failure and outage, not once per retry.
			a.log.Warn("agentx: cannot open a session, retrying", "address", a.cfg.Address, "err", err)
			seen[err.Error()] = true
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			a.log.Info("agentx: subagent stopped", "address", a.cfg.Address)
			return nil
		case <-t.C:
		}
		delay = min(2*delay, a.cfg.BackoffMax)
	}
}

// maxLoggedErrors bounds the distinct failures logged during one outage.
const maxLoggedErrors = 8

// runSession dials, opens and registers, then serves until the session
// fails or ctx ends. established is set once registration succeeded.
func (a *Subagent) runSession(ctx context.Context) (established *time.Time, err error) {
	conn, err := a.dial(ctx, a.network, a.address)
	if err != nil {
		return nil, err
	}
	rsp := &responder{scope: a.scope, moments: snmpreq.Moments[uint64]{Src: a.src, Walks: &a.walks, Ages: &a.ages},
		peer: a.sessions.Add(1), writer: a.cfg.Writer, setLog: a.setLog}
	s := newSession(conn, rsp, a.log, a.cfg.RequestTimeout, a.cfg.pduTimeout())
	go s.readLoop()
	defer func() {
		s.close()
		<-s.done
		rsp.endSet() // a Set the master left unfinished: its changes stay as committed
	}()
	if err := a.setup(ctx, s); err != nil {
		return nil, err
	}
	now := time.Now()
	a.setCurrent(s)
	defer a.setCurrent(nil)
	a.log.Info("agentx: session open", "address", a.cfg.Address, "sessionID", s.sessionID.Load(),
		"registrations", len(a.regs))

	var tick <-chan time.Time
	if a.cfg.PingInterval > 0 {
		t := time.NewTicker(a.cfg.PingInterval)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			a.setCurrent(nil)
			a.shutdown(s)
			return &now, ctx.Err()
		case <-s.done:
			return &now, s.err
		case <-tick:
			if _, err := s.request(ctx, &packet{header: header{typ: typePing}}, "Ping"); err != nil {
				if ctx.Err() != nil {
					continue // shut down on the next pass
				}
				if errors.Is(err, ErrTimeout) {
					s.goodbye(reasonTimeouts)
				}
				return &now, fmt.Errorf("keep-alive: %w", err)
			}
		}
	}
}

// setup opens the session, registers everything and adds the agent
// capabilities (whose failure is only logged: sysORTable is cosmetic).
func (a *Subagent) setup(ctx context.Context, s *session) error {
	open := packet{header: header{typ: typeOpen}, timeout: a.cfg.openTimeout(), id: a.cfg.ID, descr: a.cfg.Description}
	r, err := s.request(ctx, &open, "Open")
	if err != nil {
		return err
	}
	s.sessionID.Store(r.sessionID)
	if err := a.register(ctx, s); err != nil {
		// The master holds a session for us until told why we leave it.
		if reason, ok := abandonReason(ctx, err); ok {
			s.goodbye(reason)
		}
		return err
	}
	return nil
}

// abandonReason is the Close reason for a session given up during setup;
// false when the connection is already gone.
func abandonReason(ctx context.Context, err error) (closeReason, bool) {
	var pe *parseError
	switch {
	case ctx.Err() != nil:
		return reasonShutdown, true
	case errors.Is(err, ErrSessionClosed):
		return 0, false
	case errors.As(err, &pe):
		return reasonParseError, true
	case errors.Is(err, ErrTimeout):
		return reasonTimeouts, true
	}
	return reasonOther, true
}

// register sends every Register, then every AddAgentCaps.
func (a *Subagent) register(ctx context.Context, s *session) error {
	for _, g := range a.regs {
		reg := regPacket(typeRegister, g)
		if _, err := s.request(ctx, &reg, "Register "+g.String()); err != nil {
			if !g.Optional || ctx.Err() != nil || !isResponseError(err) {
				return err
			}
			a.log.Warn("agentx: master refused an optional registration; serving without it", "subtree", g.String(), "err", err)
		}
	}
	for _, c := range a.cfg.Capabilities {
		p := packet{header: header{typ: typeAddAgentCaps}, id: c.ID, descr: c.Description}
		if _, err := s.request(ctx, &p, "AddAgentCaps "+c.ID.String()); err != nil {
			if ctx.Err() != nil || !isResponseError(err) {
				return err
			}
			a.log.Warn("agentx: master refused an agent capability", "id", c.ID.String(), "err", err)
		}
	}
	return nil
}

// shutdown says goodbye within a short bound; the master would clean up
// after a dropped connection anyway.
func (a *Subagent) shutdown(s *session) {
	ctx, cancel := context.WithTimeout(context.Background(), min(a.cfg.RequestTimeout, 2*time.Second))
	defer cancel()
	type step struct {
		p  packet
		op string
	}
	var steps []step
	for _, c := range a.cfg.Capabilities {
		steps = append(steps, step{packet{header: header{typ: typeRemoveAgentCaps}, id: c.ID}, "RemoveAgentCaps " + c.ID.String()})
	}
	for _, g := range a.regs {
		steps = append(steps, step{regPacket(typeUnregister, g), "Unregister " + g.String()})
	}
	steps = append(steps, step{packet{header: header{typ: typeClose}, reason: reasonShutdown}, "Close"})
	for i := range steps {
		_, err := s.request(ctx, &steps[i].p, steps[i].op)
		switch {
		case isResponseError(err):
			// Already gone on the master's side: Close still frees the rest.
			a.log.Info("agentx: master refused a shutdown step", "err", err)
		case err != nil:
			a.log.Debug("agentx: shutdown cut short", "err", err)
			return
		}
	}
}

// regPacket is the Register or Unregister PDU of g; an Unregister must
// repeat the range and priority of its Register (RFC 2741 6.2.4).
func regPacket(typ pduType, g Registration) packet {
	return packet{header: header{typ: typ}, priority: g.Priority, rangeSubID: g.RangeSubID,
		subtree: g.Subtree, upperBound: g.UpperBound}
}

func isResponseError(err error) bool {
	var re *ResponseError
	return errors.As(err, &re)
}

func (a *Subagent) setCurrent(s *session) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case s != nil && a.cur == nil:
		a.cur = s
		close(a.up)
	case s == nil && a.cur != nil:
		a.cur = nil
		a.up = make(chan struct{})
	}
}
