package control

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"

	"github.com/perfagent/subagent/spmi"
)

// Listen opens the control socket in runDir. A socket left by a daemon
// that died is removed; one that answers belongs to a running daemon and
// is an error.
func Listen(runDir string) (net.Listener, error) {
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		return nil, fmt.Errorf("run directory: %w", err)
	}
	path := SocketPath(runDir)
	if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
		c.Close()
		return nil, fmt.Errorf("another daemon serves %s; stop it or use another --run-dir", path)
	}
	_ = os.Remove(path)
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	// Read-only operations on public statistics: anyone on the host may ask.
	if err := os.Chmod(path, 0o666); err != nil {
		ln.Close()
		return nil, fmt.Errorf("control socket: %w", err)
	}
	return ln, nil
}

// Server answers control requests from a hierarchy.
type Server struct {
	H       *spmi.Hierarchy
	Log     *slog.Logger
	Version string
	// Idle bounds how long a connection may stay silent.
	Idle time.Duration
}

// Serve accepts connections until ctx is done, then closes ln and waits
// for the connections it serves.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if s.Idle == 0 {
		s.Idle = 30 * time.Second
	}
	var wg sync.WaitGroup
	conns := map[net.Conn]bool{}
	var mu sync.Mutex
	go func() {
		<-ctx.Done()
		ln.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
	}()
	defer wg.Wait()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				continue
			}
			return fmt.Errorf("control socket: %w", err)
		}
		mu.Lock()
		conns[c] = true
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.serveConn(c)
			mu.Lock()
			delete(conns, c)
			mu.Unlock()
			c.Close()
		}()
	}
}

func (s *Server) serveConn(c net.Conn) {
	sc := bufio.NewScanner(c)
	sc.Buffer(make([]byte, 4096), maxLine)
	enc := json.NewEncoder(c)
	for {
		c.SetDeadline(time.Now().Add(s.Idle))
		if !sc.Scan() {
			if err := sc.Err(); err != nil && !errors.Is(err, net.ErrClosed) {
				s.Log.Debug("control connection ended", "err", err)
			}
			return
		}
		var req Request
		var resp Response
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			resp.Err = &spmi.Error{Code: spmi.SiBadArgument, Msg: "malformed control request: " + err.Error()}
		} else {
			resp = s.answer(&req)
		}
		if err := enc.Encode(&resp); err != nil {
			return
		}
	}
}

func (s *Server) answer(req *Request) Response {
	switch req.Op {
	case "peek":
		snap := s.H.Fresh()
		entries, err := Peek(snap, req.Path)
		if err != nil {
			return Response{Err: asSpmiError(err)}
		}
		return Response{Peek: entries}
	case "get":
		if len(req.Paths) == 0 || len(req.Paths) > 10000 {
			return Response{Err: &spmi.Error{Code: spmi.SiBadArgument, Msg: "get needs 1 to 10000 paths"}}
		}
		smp, err := s.H.FreshAfter(req.After).Read(req.Paths)
		if err != nil {
			return Response{Err: asSpmiError(err)}
		}
		return Response{Sample: &smp}
	case "delete":
		if err := s.H.Delete(req.Path); err != nil {
			return Response{Err: asSpmiError(err)}
		}
		return Response{}
	case "status":
		snap := s.H.Fresh()
		return Response{Status: &Status{PID: os.Getpid(), Base: snap.Base.String(), NumStats: snap.NumStats, Version: s.Version}}
	}
	return Response{Err: asSpmiError(errBadOp(req.Op))}
}
