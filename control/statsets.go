package control

import (
	"fmt"
	"unsafe"

	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/client/spmiwire"
)

// A runtime statset (statset.*) holds its paths in the daemon, so that a
// read is one small request however many statistics it has, and its
// answer one consistent sample: a `get` names every path each time and is
// bounded by spmiwire.MaxRequest. libSpmi keeps its statsets here.
const (
	// MaxStatSetPaths bounds one statset: its read answers within the
	// 8 MiB a libSpmi consumer accepts (about 40 bytes a value).
	MaxStatSetPaths = 100_000
	// MaxSessionStatSets bounds the statsets of one connection (owners'
	// included); a user's connections together have
	// control.max_statsets_per_uid.
	MaxSessionStatSets = 4096
	statsetBytes       = 256
	// pathBytes is what a path costs besides its text: its string and
	// its item in each answer.
	pathBytes = int64(unsafe.Sizeof("")) + int64(unsafe.Sizeof(spmiwire.Item{}))
)

type sessionStatSet struct {
	paths []string
	bytes int64 // charged to the user
}

func (s *session) statset(id int) (*sessionStatSet, *spmierr.Error) {
	ss := s.statsets[id]
	if ss == nil {
		return nil, &spmierr.Error{Code: spmierr.SiInvalidCx, Msg: fmt.Sprintf("no statset %d in this session (created and not freed)", id)}
	}
	return ss, nil
}

// statsetOp runs one of the statset operations.
func (srv *Server) statsetOp(ses *session, req *spmiwire.Request, who caller) spmiwire.Response {
	switch req.Op {
	case "statset.create":
		if len(ses.statsets) >= MaxSessionStatSets {
			return spmiwire.Response{Err: &spmierr.Error{Code: spmierr.SiCallocFailed, Msg: fmt.Sprintf("this session has %d statsets, the most one may hold", MaxSessionStatSets)}}
		}
		ss := &sessionStatSet{bytes: statsetBytes}
		if ob := srv.charge(ses, usage{statsets: 1, bytes: ss.bytes}); ob != nil {
			return srv.overBudget(who.Peer, req.Op, ob)
		}
		ses.nextID++
		ses.statsets[ses.nextID] = ss
		return spmiwire.Response{ID: ses.nextID}
	}
	ss, err := ses.statset(req.ID)
	if err != nil {
		return spmiwire.Response{Err: err}
	}
	switch req.Op {
	case "statset.free":
		srv.charge(ses, usage{statsets: -1, bytes: -ss.bytes})
		delete(ses.statsets, req.ID)
		return spmiwire.Response{}
	case "statset.add":
		// Every path names a statistic now (one with no value now may
		// have one later), or none is added; with Keep, any path.
		if len(req.Paths) == 0 || len(req.Paths) > spmiwire.MaxPaths {
			return spmiwire.Response{Err: &spmierr.Error{Code: spmierr.SiBadArgument, Msg: fmt.Sprintf("statset.add needs 1 to %d paths", spmiwire.MaxPaths)}}
		}
		if n := len(ss.paths) + len(req.Paths); n > MaxStatSetPaths {
			return spmiwire.Response{Err: &spmierr.Error{Code: spmierr.SiCallocFailed, Msg: fmt.Sprintf(
				"statset %d would hold %d statistics, over the %d one statset may (its read must fit one answer)", req.ID, n, MaxStatSetPaths)}}
		}
		var add int64
		for _, p := range req.Paths {
			add += pathBytes + int64(len(p))
		}
		if !req.Keep {
			smp, rerr := srv.H.Fresh().Read(req.Paths)
			if rerr != nil {
				return spmiwire.Response{Err: asSpmiError(rerr)}
			}
			for _, it := range smp.Items {
				if it.Err != nil && it.Err.Code != spmierr.SiNoValue {
					return spmiwire.Response{Err: it.Err}
				}
			}
		}
		if ob := srv.charge(ses, usage{bytes: add}); ob != nil {
			return srv.overBudget(who.Peer, req.Op, ob)
		}
		ss.bytes += add
		ss.paths = append(ss.paths, req.Paths...)
		return spmiwire.Response{ID: len(ss.paths)}
	case "statset.get":
		if len(ss.paths) == 0 {
			return spmiwire.Response{Err: &spmierr.Error{Code: spmierr.SiBadArgument, Msg: fmt.Sprintf("statset %d is empty", req.ID)}}
		}
		smp, rerr := srv.H.FreshAfter(req.After).Read(ss.paths)
		if rerr != nil {
			return spmiwire.Response{Err: asSpmiError(rerr)}
		}
		// The caller has each path's description from its add: values
		// only, so that 20,000 of them take under 1 MB.
		for i := range smp.Items {
			smp.Items[i].Path, smp.Items[i].Stat = "", nil
		}
		return spmiwire.Response{Sample: &smp}
	}
	return spmiwire.Response{Err: asSpmiError(errBadOp(req.Op))}
}
