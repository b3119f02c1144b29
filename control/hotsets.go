package control

import (
	"fmt"
	"time"

	"github.com/perfagent/subagent/hotset"
	"github.com/perfagent/subagent/spmi"
)

// Hotsets created at run time (the guide's SpmiCreateHotSet and
// SpmiAddSetHot) belong to the connection that made them and vanish with
// it. Each is an engine of its own, so reading one never moves another's
// rates; they use the same validation and evaluation as configured ones.
// Their exceptions are counted in the results; they send no traps.

// Bounds of one connection's hotsets, so that a reader cannot grow the
// daemon without limit.
const (
	MaxSessionHotsets = 64
	MaxHotsetPeerSets = 256
)

// HotDef is one peer set to add to a hotset: SpmiAddSetHot's arguments.
type HotDef struct {
	Stat      string `json:"stat"` // "Disk/*/busy"
	MaxResp   int    `json:"maxresp,omitempty"`
	Threshold int    `json:"threshold,omitempty"`
	Frequency int    `json:"frequency,omitempty"` // minutes
	Feed      string `json:"feed_type,omitempty"` // none, threshold, always
	Excp      string `json:"excp_type,omitempty"` // none, exception, trap, both
	Severity  int    `json:"severity,omitempty"`
	TrapNo    int    `json:"trap_no,omitempty"`
}

// HotResult answers a read of a hotset: one entry per peer set added, in
// the order added (the guide's SpmiHotVals).
type HotResult struct {
	Time     time.Time    `json:"time"`
	Elapsed  float64      `json:"elapsed"` // seconds since the previous read, 0 on the first
	PeerSets []HotPeerSet `json:"peer_sets"`
}

// HotPeerSet is one peer set's reading: its groups of peers (one per
// lowest-level parent), or the error that kept it from being read.
type HotPeerSet struct {
	Stat   string      `json:"stat"`
	Err    *spmi.Error `json:"err,omitempty"`
	Groups []HotGroup  `json:"groups,omitempty"`
	Events int         `json:"events,omitempty"` // exceptions this read raised
	Def    HotDef      `json:"def"`
}

// HotGroup is the guide's SpmiHotVals for one parent of peers.
type HotGroup struct {
	Parent string       `json:"parent"` // "Disk/"
	Avail  int          `json:"avail"`  // values that qualify (avail_resp)
	Items  []HotItemOut `json:"items"`  // count = len(Items)
}

// HotItemOut is the guide's SpmiHotItems: a peer and its compared value
// (a rate per second for counters).
type HotItemOut struct {
	Name  string  `json:"name"`
	Path  string  `json:"path"`
	Value float64 `json:"value"`
	Units string  `json:"units,omitempty"`
}

// session is what one control connection created.
type session struct {
	hotsets map[int]*sessionHotset
	nextID  int
}

type sessionHotset struct {
	engine *hotset.Engine
	defs   []hotset.Def
	wire   []HotDef
	seq    int
}

func (s *session) hotset(id int) (*sessionHotset, *spmi.Error) {
	h := s.hotsets[id]
	if h == nil {
		return nil, &spmi.Error{Code: spmi.SiInvalidCx, Msg: fmt.Sprintf("no hotset %d in this session (created and not freed)", id)}
	}
	return h, nil
}

// hotsetOp runs one of the hotset operations.
func (srv *Server) hotsetOp(ses *session, req *Request) Response {
	switch req.Op {
	case "hotset.create":
		if len(ses.hotsets) >= MaxSessionHotsets {
			return Response{Err: &spmi.Error{Code: spmi.SiCallocFailed, Msg: fmt.Sprintf("this session has %d hotsets, the most one may hold", MaxSessionHotsets)}}
		}
		e, _ := hotset.New(nil, 1, nil)
		ses.nextID++
		ses.hotsets[ses.nextID] = &sessionHotset{engine: e}
		return Response{ID: ses.nextID}
	case "hotset.free":
		if _, err := ses.hotset(req.ID); err != nil {
			return Response{Err: err}
		}
		delete(ses.hotsets, req.ID)
		return Response{}
	}
	h, err := ses.hotset(req.ID)
	if err != nil {
		return Response{Err: err}
	}
	switch req.Op {
	case "hotset.add":
		if req.Hot == nil {
			return Response{Err: &spmi.Error{Code: spmi.SiBadArgument, Msg: "hotset.add needs a hot definition"}}
		}
		if len(h.defs) >= MaxHotsetPeerSets {
			return Response{Err: &spmi.Error{Code: spmi.SiCallocFailed, Msg: fmt.Sprintf("hotset %d has %d peer sets, the most one may hold", req.ID, MaxHotsetPeerSets)}}
		}
		h.seq++
		d, err := toDef(fmt.Sprintf("s%d", h.seq), req.Hot)
		if err == nil {
			err = existsNow(d, srv.H.Fresh())
		}
		if err == nil {
			err = h.engine.Replace(append(append([]hotset.Def(nil), h.defs...), d))
		}
		if err != nil {
			return Response{Err: asSpmiError(err)}
		}
		h.defs, h.wire = append(h.defs, d), append(h.wire, *req.Hot)
		return Response{ID: len(h.defs) - 1}
	case "hotset.del":
		i := req.Index
		if i < 0 || i >= len(h.defs) {
			return Response{Err: &spmi.Error{Code: spmi.SiBadArgument, Msg: fmt.Sprintf("hotset %d has no peer set %d", req.ID, i)}}
		}
		defs := append(append([]hotset.Def(nil), h.defs[:i]...), h.defs[i+1:]...)
		if err := h.engine.Replace(defs); err != nil {
			return Response{Err: asSpmiError(err)}
		}
		h.defs, h.wire = defs, append(append([]HotDef(nil), h.wire[:i]...), h.wire[i+1:]...)
		return Response{}
	case "hotset.get":
		evs := h.engine.Evaluate(srv.H.FreshAfter(req.After))
		return Response{Hot: hotResult(h, evs)}
	}
	return Response{Err: asSpmiError(errBadOp(req.Op))}
}

// toDef checks a wire definition as the configuration does.
func toDef(name string, w *HotDef) (hotset.Def, error) {
	gp, stat, err := hotset.ParsePath(w.Stat)
	if err != nil {
		return hotset.Def{}, err
	}
	d := hotset.Def{Name: name, GrandParent: gp, Stat: stat, MaxResp: w.MaxResp, Threshold: w.Threshold,
		Frequency: time.Duration(w.Frequency) * time.Minute, Severity: w.Severity, TrapNo: w.TrapNo}
	var ok bool
	if d.Feed, ok = hotset.ParseFeed(orDefault(w.Feed, "threshold")); !ok {
		return d, spmi.Errorf(spmi.SiBadArgument, "feed_type %q is not none, threshold or always", w.Feed)
	}
	if d.Excp, ok = hotset.ParseExcp(orDefault(w.Excp, "none")); !ok {
		return d, spmi.Errorf(spmi.SiBadArgument, "excp_type %q is not none, exception, trap or both", w.Excp)
	}
	return d, d.Validate()
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// existsNow refuses a statistic that matches nothing, as the guide's
// SpmiAddSetHot does, with the engine's own message (and its suggestion).
func existsNow(d hotset.Def, snap *spmi.Snapshot) error {
	probe, err := hotset.New([]hotset.Def{d}, 1, nil)
	if err != nil {
		return err
	}
	probe.Evaluate(snap)
	if v := probe.Views(); len(v) == 1 && v[0].Result.Err != nil {
		return v[0].Result.Err
	}
	return nil
}

func hotResult(h *sessionHotset, evs []hotset.Event) *HotResult {
	views := h.engine.Views()
	out := &HotResult{}
	for i, v := range views {
		if i == 0 {
			out.Time, out.Elapsed = v.Result.Time, v.Result.Elapsed.Seconds()
		}
		ps := HotPeerSet{Stat: v.Def.Path(), Def: h.wire[i]}
		if v.Result.Err != nil {
			ps.Err = asSpmiError(v.Result.Err)
		}
		for _, g := range v.Result.Groups {
			hg := HotGroup{Parent: g.Parent, Avail: g.Avail, Items: []HotItemOut{}}
			for _, it := range g.Items {
				hg.Items = append(hg.Items, HotItemOut{Name: it.Name, Path: it.Path, Value: it.Value, Units: it.Units})
			}
			ps.Groups = append(ps.Groups, hg)
		}
		for _, ev := range evs {
			if ev.Def.Name == v.Def.Name {
				ps.Events++
			}
		}
		out.PeerSets = append(out.PeerSets, ps)
	}
	return out
}
