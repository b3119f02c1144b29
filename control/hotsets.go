package control

import (
	"fmt"
	"time"
	"unsafe"

	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/client/spmiwire"

	"github.com/perfagent/subagent/hotset"
	"github.com/perfagent/subagent/internal/unixsock"
)

// Hotsets created at run time (the guide's SpmiCreateHotSet and
// SpmiAddSetHot) belong to the connection that made them and vanish with
// it. Each is an engine of its own, so reading one never moves another's
// rates; they use the same validation and evaluation as configured ones.
// Their exceptions are counted in the results; they send no traps.

// Bounds of one connection's hotsets; what one user's connections hold
// together is bounded by its Budget.
const (
	MaxSessionHotsets = 64
	MaxHotsetPeerSets = 256
)

// session is what one control connection created, charged to its user.
type session struct {
	user     *user
	hotsets  map[int]*sessionHotset
	statsets map[int]*sessionStatSet
	nextID   int // of hotsets and statsets
	held     usage
	peak     int64 // most bytes held: a session that held much returns memory at its end
	turn     bool  // the user's turn is taken, until the answer is written
}

type sessionHotset struct {
	engine *hotset.Engine
	defs   []hotset.Def
	wire   []spmiwire.HotDef
	seq    int
	// pending is what peer sets added since the last read may hold, by
	// name: the engine bounds them once it has evaluated them.
	pending map[string]int64
	bytes   int64 // charged to the user
}

// hotsetBytes is a hotset's own structures, a peer set's definition
// besides its strings.
const (
	hotsetBytes = 512
	defBytes    = int64(unsafe.Sizeof(hotset.Def{}) + unsafe.Sizeof(spmiwire.HotDef{}))
)

// cost is the most memory h may hold until its next read.
func (h *sessionHotset) cost() int64 {
	n := hotsetBytes + h.engine.Bound()
	for _, b := range h.pending {
		n += b
	}
	for i := range h.wire {
		w := &h.wire[i]
		n += defBytes + int64(len(w.Stat)+len(w.Feed)+len(w.Excp))
	}
	return n
}

func (s *session) hotset(id int) (*sessionHotset, *spmierr.Error) {
	h := s.hotsets[id]
	if h == nil {
		return nil, &spmierr.Error{Code: spmierr.SiInvalidCx, Msg: fmt.Sprintf("no hotset %d in this session (created and not freed)", id)}
	}
	return h, nil
}

// charge takes d for ses from its user's budget.
func (srv *Server) charge(ses *session, d usage) *overBudget {
	if ob := srv.users.take(ses.user, d); ob != nil {
		return ob
	}
	ses.held = ses.held.plus(d)
	ses.peak = max(ses.peak, ses.held.bytes)
	return nil
}

// recharge brings what h is charged to its cost, with d's counts.
func (srv *Server) recharge(ses *session, h *sessionHotset, d usage) *overBudget {
	c := h.cost()
	d.bytes = c - h.bytes
	if ob := srv.charge(ses, d); ob != nil {
		return ob
	}
	h.bytes = c
	return nil
}

// overBudget answers a refusal and logs it, a line a minute at most per
// user and setting.
func (srv *Server) overBudget(who unixsock.Peer, op string, ob *overBudget) spmiwire.Response {
	srv.refusals.Note(who, "control: over a per-user budget", ob.setting, "op", op)
	return spmiwire.Response{Err: ob.err}
}

// hotsetOp runs one of the hotset operations.
func (srv *Server) hotsetOp(ses *session, req *spmiwire.Request, who caller) spmiwire.Response {
	switch req.Op {
	case "hotset.create":
		if len(ses.hotsets) >= MaxSessionHotsets {
			return spmiwire.Response{Err: &spmierr.Error{Code: spmierr.SiCallocFailed, Msg: fmt.Sprintf("this session has %d hotsets, the most one may hold", MaxSessionHotsets)}}
		}
		e, _ := hotset.New(nil, 1, nil)
		h := &sessionHotset{engine: e, pending: map[string]int64{}}
		if ob := srv.recharge(ses, h, usage{hotsets: 1}); ob != nil {
			return srv.overBudget(who.Peer, req.Op, ob)
		}
		ses.nextID++
		ses.hotsets[ses.nextID] = h
		return spmiwire.Response{ID: ses.nextID}
	case "hotset.free":
		h, err := ses.hotset(req.ID)
		if err != nil {
			return spmiwire.Response{Err: err}
		}
		srv.charge(ses, usage{hotsets: -1, peerSets: -len(h.defs), bytes: -h.bytes})
		delete(ses.hotsets, req.ID)
		return spmiwire.Response{}
	}
	h, err := ses.hotset(req.ID)
	if err != nil {
		return spmiwire.Response{Err: err}
	}
	switch req.Op {
	case "hotset.add":
		if req.Hot == nil {
			return spmiwire.Response{Err: &spmierr.Error{Code: spmierr.SiBadArgument, Msg: "hotset.add needs a hot definition"}}
		}
		if len(h.defs) >= MaxHotsetPeerSets {
			return spmiwire.Response{Err: &spmierr.Error{Code: spmierr.SiCallocFailed, Msg: fmt.Sprintf("hotset %d has %d peer sets, the most one may hold", req.ID, MaxHotsetPeerSets)}}
		}
		h.seq++
		d, err := toDef(fmt.Sprintf("s%d", h.seq), req.Hot)
		var bound int64
		if err == nil {
			bound, err = hotset.Probe(d, srv.H.Fresh())
		}
		oldDefs, oldWire := h.defs, h.wire
		if err == nil {
			err = h.engine.Replace(append(oldDefs[:len(oldDefs):len(oldDefs)], d))
		}
		if err != nil {
			return spmiwire.Response{Err: asSpmiError(err)}
		}
		h.defs, h.wire = append(oldDefs[:len(oldDefs):len(oldDefs)], d), append(oldWire[:len(oldWire):len(oldWire)], *req.Hot)
		h.pending[d.Name] = bound
		if ob := srv.recharge(ses, h, usage{peerSets: 1}); ob != nil {
			h.engine.Replace(oldDefs) // the others keep their state
			h.defs, h.wire = oldDefs, oldWire
			delete(h.pending, d.Name)
			return srv.overBudget(who.Peer, req.Op, ob)
		}
		return spmiwire.Response{ID: len(h.defs) - 1}
	case "hotset.del":
		i := req.Index
		if i < 0 || i >= len(h.defs) {
			return spmiwire.Response{Err: &spmierr.Error{Code: spmierr.SiBadArgument, Msg: fmt.Sprintf("hotset %d has no peer set %d", req.ID, i)}}
		}
		defs := append(append([]hotset.Def(nil), h.defs[:i]...), h.defs[i+1:]...)
		if err := h.engine.Replace(defs); err != nil {
			return spmiwire.Response{Err: asSpmiError(err)}
		}
		delete(h.pending, h.defs[i].Name)
		h.defs, h.wire = defs, append(append([]spmiwire.HotDef(nil), h.wire[:i]...), h.wire[i+1:]...)
		srv.recharge(ses, h, usage{peerSets: -1}) // less: always taken
		return spmiwire.Response{}
	case "hotset.get":
		evs := h.engine.Evaluate(srv.H.FreshAfter(req.After))
		clear(h.pending)
		if ob := srv.recharge(ses, h, usage{}); ob != nil {
			// The tree grew under the peer sets: what they hold now
			// is over the budget, so they start over (and hold little).
			h.engine.Forget()
			srv.recharge(ses, h, usage{})
			return srv.overBudget(who.Peer, req.Op, ob)
		}
		return spmiwire.Response{Hot: hotResult(h, evs)}
	}
	return spmiwire.Response{Err: asSpmiError(errBadOp(req.Op))}
}

// toDef checks a wire definition as the configuration does.
func toDef(name string, w *spmiwire.HotDef) (hotset.Def, error) {
	gp, stat, err := hotset.ParsePath(w.Stat)
	if err != nil {
		return hotset.Def{}, err
	}
	d := hotset.Def{Name: name, GrandParent: gp, Stat: stat, MaxResp: w.MaxResp, Threshold: w.Threshold,
		Frequency: time.Duration(w.Frequency) * time.Minute, Severity: w.Severity, TrapNo: w.TrapNo,
		Rearm: w.Rearm, Cleared: w.Cleared}
	var ok bool
	if d.Feed, ok = hotset.ParseFeed(orDefault(w.Feed, "threshold")); !ok {
		return d, spmierr.Errorf(spmierr.SiBadArgument, "feed_type %q is not none, threshold or always", w.Feed)
	}
	if d.Excp, ok = hotset.ParseExcp(orDefault(w.Excp, "none")); !ok {
		return d, spmierr.Errorf(spmierr.SiBadArgument, "excp_type %q is not none, exception, trap or both", w.Excp)
	}
	return d, d.Validate()
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func hotResult(h *sessionHotset, evs []hotset.Event) *spmiwire.HotResult {
	views := h.engine.Views()
	out := &spmiwire.HotResult{}
	for i, v := range views {
		if i == 0 {
			out.Time, out.Elapsed = v.Result.Time, v.Result.Elapsed.Seconds()
		}
		ps := spmiwire.HotPeerSet{Stat: v.Def.Path(), Def: h.wire[i]}
		if v.Result.Err != nil {
			ps.Err = asSpmiError(v.Result.Err)
		}
		for _, g := range v.Result.Groups {
			hg := spmiwire.HotGroup{Parent: g.Parent, Avail: g.Avail, Items: []spmiwire.HotItemOut{}}
			for _, it := range g.Items {
				hg.Items = append(hg.Items, spmiwire.HotItemOut{Name: it.Name, Path: it.Path, Value: it.Value, Units: it.Units, Raw: it.Raw, NoRate: it.NoRate})
			}
			ps.Groups = append(ps.Groups, hg)
		}
		for _, ev := range evs {
			switch {
			case ev.Def.Name != v.Def.Name:
			case ev.Cleared:
				ps.Cleared = append(ps.Cleared, hotset.Peers(ev.Items))
			default:
				ps.Events++
			}
		}
		out.PeerSets = append(out.PeerSets, ps)
	}
	return out
}
