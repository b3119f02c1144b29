package control

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/client/spmiwire"

	"github.com/perfagent/subagent/internal/foldlog"
	"github.com/perfagent/subagent/internal/unixsock"
	"github.com/perfagent/subagent/spmi"
)

// Access says who may use the control socket. Root and the daemon's own
// user may always read and change; Readers may also read (peek, get,
// status) and Admins may also change (create, delete).
type Access struct {
	Mode    os.FileMode // of the socket file, default 0660
	Group   int         // of the socket file; <= 0 keeps the daemon's group
	Readers unixsock.Allow
	Admins  unixsock.Allow
	// MaxConns bounds open connections (default 64, a quarter per user).
	MaxConns int
	// Budget bounds what each user other than the owners holds.
	Budget Budget
}

// readers is the full read allow list: the owners, the socket's group,
// and the configured readers.
func (a Access) readers() unixsock.Allow {
	g := uint32(os.Getegid())
	if a.Group > 0 {
		g = uint32(a.Group)
	}
	return unixsock.Owners().With(a.Readers.UIDs, append(a.Readers.GIDs, g))
}

// Listen opens the control socket in runDir (which the daemon has
// prepared). A peer that may not read is refused with an answer saying so.
func Listen(runDir string, a Access, log *slog.Logger) (*unixsock.Listener, error) {
	readers := a.readers()
	return unixsock.Listen(unixsock.Config{
		Name: "control", Path: spmiwire.SocketPath(runDir), Mode: a.Mode, Group: a.Group, MaxConns: a.MaxConns,
		Admit: func(p unixsock.Peer) error {
			if readers.Admits(p) {
				return nil
			}
			return fmt.Errorf("uid %d may not use the control socket (control.allow_uids, control.allow_gids)", p.UID)
		},
		Refuse: func(c *net.UnixConn, reason string) {
			json.NewEncoder(c).Encode(spmiwire.Response{Err: &spmierr.Error{Code: spmierr.SiOtherErr, Msg: reason}})
			// Read the request the peer is sending: closing with it unread
			// would reset the connection before the peer reads the answer.
			c.CloseWrite()
			c.SetReadDeadline(time.Now().Add(time.Second))
			io.Copy(io.Discard, io.LimitReader(c, spmiwire.MaxRequest))
		},
		Logger: log,
	})
}

// Server answers control requests from a hierarchy.
type Server struct {
	H       *spmi.Hierarchy
	Log     *slog.Logger
	Version string
	Access  Access
	// Exprs holds the derived statistics and alarms (nil: none served).
	Exprs ExprStore
	// SLOs holds the service level objectives (nil: none served).
	SLOs SLOStore
	// Idle bounds how long a connection may stay silent.
	Idle time.Duration

	users    *users
	refusals *unixsock.RefusalLog
	failures *foldlog.Log     // failed changes of admins, at INFO
	now      func() time.Time // the failures' clock; nil: time.Now
	owners   *unixsock.Allow  // nil: unixsock.Owners(); tests make themselves a reader
}

// Serve answers on l until ctx is done.
func (s *Server) Serve(ctx context.Context, l *unixsock.Listener) error {
	if s.Idle == 0 {
		s.Idle = 30 * time.Second
	}
	owners := unixsock.Owners()
	if s.owners != nil {
		owners = *s.owners
	}
	s.users = newUsers(s.Access.Budget, owners)
	s.refusals = unixsock.NewRefusalLog(s.Log)
	s.failures = foldlog.New(s.Log, slog.LevelInfo)
	if s.now != nil {
		s.failures.Now = s.now
	}
	admins := owners.With(s.Access.Admins.UIDs, s.Access.Admins.GIDs)
	return l.Serve(ctx, func(ctx context.Context, c *net.UnixConn, p unixsock.Peer) {
		s.serveConn(c, caller{Peer: p, admin: admins.Admits(p)}, l)
	})
}

// caller is who sent the requests of one connection.
type caller struct {
	unixsock.Peer
	admin bool
}

func (s *Server) serveConn(c *net.UnixConn, who caller, l *unixsock.Listener) {
	sc := bufio.NewScanner(c)
	sc.Buffer(make([]byte, 4096), spmiwire.MaxRequest)
	enc := json.NewEncoder(c)
	ses := &session{user: s.users.join(who.Peer), hotsets: map[int]*sessionHotset{}, statsets: map[int]*sessionStatSet{}}
	defer s.end(ses)
	for {
		c.SetDeadline(time.Now().Add(s.Idle))
		if !sc.Scan() {
			err := sc.Err()
			if errors.Is(err, bufio.ErrTooLong) {
				l.Refuse(c, who.Peer, fmt.Sprintf("control request longer than %d bytes; ask for fewer paths at a time", spmiwire.MaxRequest))
			} else if err != nil && !errors.Is(err, net.ErrClosed) {
				s.Log.Debug("control connection ended", "err", err)
			}
			return
		}
		ses.wait()
		var req spmiwire.Request
		var resp spmiwire.Response
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			resp.Err = &spmierr.Error{Code: spmierr.SiBadArgument, Msg: "malformed control request: " + err.Error()}
		} else {
			resp = s.answer(&req, who, ses)
		}
		err := enc.Encode(&resp)
		ses.done()
		if err != nil {
			return
		}
	}
}

// wait takes the user's turn for one request, until its answer is
// written: a user other than the owners has one request answered at a
// time, however many connections it opens, so it takes at most one
// processor and holds at most one answer (a peek of the whole tree).
func (ses *session) wait() {
	if !ses.user.exempt && !ses.turn {
		ses.user.turn.Lock()
		ses.turn = true
	}
}

func (ses *session) done() {
	if ses.turn {
		ses.user.turn.Unlock()
		ses.turn = false
	}
}

// end gives back what a session held; after a large one, memory goes
// back to the system (at once, not when the collector next runs).
func (s *Server) end(ses *session) {
	ses.done()
	ses.hotsets, ses.statsets = nil, nil
	s.users.leave(ses.user, ses.held)
	if ses.peak >= returnAfter {
		s.H.ReturnMemory()
	}
}

func (s *Server) answer(req *spmiwire.Request, who caller, ses *session) spmiwire.Response {
	if strings.HasPrefix(req.Op, "hotset.") {
		return s.hotsetOp(ses, req, who)
	}
	if strings.HasPrefix(req.Op, "expr.") {
		return s.exprOp(req, who)
	}
	if strings.HasPrefix(req.Op, "slo.") {
		return s.sloOp(req, who)
	}
	if strings.HasPrefix(req.Op, "statset.") {
		return s.statsetOp(ses, req, who)
	}
	switch req.Op {
	case "peek":
		limit := req.Limit
		if limit < 0 || limit > spmiwire.MaxPeekPage || limit == 0 && (req.Depth != 0 || req.From != "") {
			limit = spmiwire.MaxPeekPage
		}
		entries, more, err := spmi.PeekPage(s.H.Fresh(), req.Path, max(req.Depth, 0), req.From, limit)
		if err != nil {
			return spmiwire.Response{Err: asSpmiError(err)}
		}
		return spmiwire.Response{Peek: entries, More: more}
	case "get":
		if len(req.Paths) == 0 || len(req.Paths) > spmiwire.MaxPaths {
			return spmiwire.Response{Err: &spmierr.Error{Code: spmierr.SiBadArgument, Msg: fmt.Sprintf("get needs 1 to %d paths", spmiwire.MaxPaths)}}
		}
		smp, err := s.H.FreshAfter(req.After).Read(req.Paths)
		if err != nil {
			return spmiwire.Response{Err: asSpmiError(err)}
		}
		return spmiwire.Response{Sample: &smp}
	case "create", "delete":
		return s.change(req, who)
	case "status":
		snap := s.H.Fresh()
		return spmiwire.Response{Status: &spmiwire.Status{PID: os.Getpid(), Base: snap.Base.String(), NumStats: snap.NumStats, Version: s.Version}}
	}
	return spmiwire.Response{Err: asSpmiError(errBadOp(req.Op))}
}

// change creates or deletes a context: only admins may, and every change
// is logged with who asked; refusals and failures a line a minute at
// most per user, operation and error code (foldlog), paths cut to
// unixsock.MaxLogText bytes.
func (s *Server) change(req *spmiwire.Request, who caller) spmiwire.Response {
	path := unixsock.LogText(req.Path)
	if refused := s.admin(req, who, path); refused != nil {
		return spmiwire.Response{Err: refused}
	}
	var err error
	if req.Op == "create" {
		_, err = s.H.Create(req.Path)
	} else {
		err = s.H.Delete(req.Path)
	}
	return s.changed(req, who, path, err)
}

// admin refuses a change to who is not an admin, noting it.
func (s *Server) admin(req *spmiwire.Request, who caller, path string) *spmierr.Error {
	if who.admin {
		return nil
	}
	s.refusals.Note(who.Peer, "control: change refused", req.Op+": not an admin (control.admin_uids, control.admin_gids)", "op", req.Op, "path", path)
	return &spmierr.Error{Code: spmierr.SiOtherErr, Msg: fmt.Sprintf(
		"uid %d may not %s: changes are for root and the daemon's user (control.admin_uids, control.admin_gids)", who.UID, req.Op)}
}

// changed answers a change and logs it, or its failure.
func (s *Server) changed(req *spmiwire.Request, who caller, path string, err error) spmiwire.Response {
	if err != nil {
		se := asSpmiError(err)
		s.failures.Note(unixsock.PeerSource(who.Peer), "control: change failed", req.Op+": "+se.Code.Name(),
			"op", req.Op, "path", path, "err", unixsock.LogText(err.Error()))
		return spmiwire.Response{Err: se}
	}
	s.Log.Info("control: changed", "op", req.Op, "path", path, "uid", who.UID, "pid", who.PID)
	return spmiwire.Response{}
}
