package agentx

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// session is one connection to the master. Its reader goroutine hands
// Responses to the goroutines waiting in request, and answers the master's
// PDUs in order, except reads that must wait for fresh values: each is
// answered by a goroutine of its own, so it delays no PDU behind it, and
// its Response may overtake earlier ones (RFC 2741 7.1: the master matches
// them by packetID). Set phases stay on the reader, in order. At most
// maxInFlight PDUs are in hand at once; the reader reads on when one is
// done. Writes from all sides are serialized by wmu, which is never held
// while waiting for the master.
type session struct {
	conn    net.Conn
	log     *slog.Logger
	timeout time.Duration // write deadline and wait for a Response
	// pduTimeout bounds the arrival of a PDU of the master's once its
	// first byte is here: a PDU cut mid-stream must not hold the session
	// until the next Ping.
	pduTimeout time.Duration
	resp       *responder

	sessionID atomic.Uint32
	packetID  atomic.Uint32

	wmu sync.Mutex

	free    chan *worker   // the PDUs' memory; empty: maxInFlight in hand
	workers sync.WaitGroup // the reads answered apart

	pmu     sync.Mutex
	pending map[uint32]chan reply

	closeOnce sync.Once
	done      chan struct{} // closed when the reader has returned
	err       error         // why the reader returned; read only after done
}

type reply struct {
	p   *packet
	err error
}

func (r reply) result(op string) (*packet, error) {
	if r.err != nil {
		return nil, fmt.Errorf("agentx: Response to %s: %w", op, r.err)
	}
	if r.p.resError != NoError {
		return r.p, &ResponseError{Op: op, Code: r.p.resError, Index: r.p.resIndex}
	}
	return r.p, nil
}

func newSession(conn net.Conn, r *responder, log *slog.Logger, timeout, pduTimeout time.Duration) *session {
	s := &session{conn: conn, log: log, timeout: timeout, pduTimeout: pduTimeout, resp: r,
		pending: make(map[uint32]chan reply), done: make(chan struct{}), free: make(chan *worker, maxInFlight)}
	for range maxInFlight {
		s.free <- new(worker)
	}
	return s
}

// maxInFlight bounds the PDUs of the master's a session holds at once:
// the one the reader answers and those waiting for fresh values apart.
// Each holds a view, and net-snmp's master times a request out after
// 1 s (agentxTimeout) anyway.
const maxInFlight = 16

// worker is the memory one PDU of the master's is decoded and answered in.
type worker struct {
	d         decoder
	req, resp packet
	out       []byte
	sc        scratch
}

// close shuts the connection; the reader then returns.
func (s *session) close() { s.closeOnce.Do(func() { s.conn.Close() }) }

// write sends one whole PDU; a failed write ends the session.
func (s *session) write(b []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.conn.SetWriteDeadline(time.Now().Add(s.timeout)); err != nil {
		s.close()
		return err
	}
	if _, err := s.conn.Write(b); err != nil {
		s.close()
		return err
	}
	return nil
}

// request sends p (a PDU of ours) and waits for its Response. A Response
// with res.error set comes back as a *ResponseError.
func (s *session) request(ctx context.Context, p *packet, op string) (*packet, error) {
	p.version = version1
	p.flags |= flagNetworkByteOrder
	p.sessionID = s.sessionID.Load()
	p.packetID = s.packetID.Add(1)
	b, err := appendPacket(nil, p)
	if err != nil {
		return nil, err
	}
	ch := make(chan reply, 1)
	s.pmu.Lock()
	s.pending[p.packetID] = ch
	s.pmu.Unlock()
	defer func() {
		s.pmu.Lock()
		delete(s.pending, p.packetID)
		s.pmu.Unlock()
	}()
	if err := s.write(b); err != nil {
		return nil, fmt.Errorf("agentx: sending %s: %w", op, err)
	}
	t := time.NewTimer(s.timeout)
	defer t.Stop()
	select {
	case r := <-ch:
		return r.result(op)
	case <-s.done:
		select {
		case r := <-ch: // answered just before the connection closed
			return r.result(op)
		default:
		}
		return nil, fmt.Errorf("%w while waiting for the Response to %s: %w", ErrSessionClosed, op, s.err)
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.C:
		return nil, fmt.Errorf("%w: %s after %v", ErrTimeout, op, s.timeout)
	}
}

// deliver hands a Response to the request waiting for its packetID.
func (s *session) deliver(h header, body []byte) {
	p := &packet{header: h}
	var d decoder
	err := d.body(p, body)
	s.pmu.Lock()
	ch := s.pending[h.packetID]
	delete(s.pending, h.packetID)
	s.pmu.Unlock()
	if ch == nil {
		s.log.Debug("agentx: Response nobody waits for", "packetID", h.packetID)
		return
	}
	ch <- reply{p: p, err: err}
}

// readLoop reads PDUs until the connection fails; done is closed once
// the reads answered apart have ended too.
func (s *session) readLoop() {
	defer close(s.done)
	s.err = s.serve()
	s.close()
	s.workers.Wait()
}

func (s *session) serve() error {
	br := bufio.NewReaderSize(s.conn, 16<<10)
	var (
		hb     [headerLen]byte
		body   []byte
		warned bool
	)
	for {
		// Waiting for a PDU is unbounded (Pings watch an idle master); the
		// rest of one must arrive within pduTimeout. A PDU already
		// buffered whole costs no deadline.
		if _, err := br.Peek(1); err != nil {
			return readErr(err)
		}
		timed := br.Buffered() < headerLen
		if timed {
			if err := s.conn.SetReadDeadline(time.Now().Add(s.pduTimeout)); err != nil {
				return readErr(err)
			}
		}
		if n, err := io.ReadFull(br, hb[:]); err != nil {
			return s.incomplete(err, "header", n, headerLen)
		}
		h, err := decodeHeader(hb[:])
		if err != nil {
			s.goodbye(reasonParseError)
			return fmt.Errorf("agentx: unreadable PDU header: %w", err)
		}
		if h.payloadLen > maxPayload {
			// The stream cannot be resynchronized: answer, then leave.
			s.writeError(&h, ParseError)
			s.goodbye(reasonParseError)
			return fmt.Errorf("agentx: %s PDU with h.payload_length %d, at most %d allowed", h.typ, h.payloadLen, maxPayload)
		}
		if !timed && br.Buffered() < int(h.payloadLen) {
			timed = true
			if err := s.conn.SetReadDeadline(time.Now().Add(s.pduTimeout)); err != nil {
				return readErr(err)
			}
		}
		if body, err = readBody(br, body, int(h.payloadLen)); err != nil {
			return s.incomplete(err, h.typ.String()+" PDU payload", len(body), int(h.payloadLen))
		}
		if timed {
			if err := s.conn.SetReadDeadline(time.Time{}); err != nil {
				return readErr(err)
			}
		}
		if h.typ == typeResponse {
			s.deliver(h, body)
			s.resp.views.expire(time.Now()) // e.g. at each ping's answer
			continue
		}
		w := <-s.free // blocks while maxInFlight PDUs are in hand
		req := &w.req
		req.header = h
		if err := w.d.body(req, body); err != nil {
			s.free <- w
			level := slog.LevelDebug
			if !warned {
				level, warned = slog.LevelWarn, true
			}
			s.log.Log(context.Background(), level, "agentx: answering a malformed PDU with parseError",
				"type", h.typ.String(), "packetID", h.packetID, "err", err)
			if err := s.writeError(&h, ParseError); err != nil {
				return err
			}
			continue
		}
		if req.typ == typeClose {
			s.free <- w
			return fmt.Errorf("agentx: master closed the session (%s)", req.reason)
		}
		if err := s.dispatch(w); err != nil {
			return err
		}
	}
}

// dispatch answers w's PDU, here or, when it must wait for fresh values,
// apart; w goes back to s.free when answered.
func (s *session) dispatch(w *worker) error {
	now := time.Now()
	if done, due := s.resp.prelude(&w.req, &w.resp, s.sessionID.Load()); done {
		var err error
		if due {
			err = s.send(w)
		}
		s.free <- w
		return err
	}
	p := s.resp.plan(&w.req, now)
	if p.ready() {
		s.resp.read(&w.sc, &w.req, &w.resp, p.s, now)
		err := s.send(w)
		s.free <- w
		return err
	}
	s.workers.Add(1)
	go func() {
		defer s.workers.Done()
		s.resp.take(&p)
		s.resp.read(&w.sc, &w.req, &w.resp, p.s, time.Now())
		s.send(w) // a failed write closes the connection: the reader returns
		s.free <- w
	}()
	return nil
}

// send writes w's Response.
func (s *session) send(w *worker) error {
	var err error
	if w.out, err = appendPacket(w.out[:0], &w.resp); err != nil {
		// Only size can fail here: say tooBig rather than nothing.
		w.resp.varbinds, w.resp.resError, w.resp.resIndex = w.resp.varbinds[:0], TooBig, 0
		w.out, _ = appendPacket(w.out[:0], &w.resp)
	}
	return s.write(w.out)
}

// writeError answers a request that got no further than its header.
func (s *session) writeError(h *header, code ErrorCode) error {
	p := packet{header: header{version: version1, typ: typeResponse, flags: h.flags & flagNetworkByteOrder,
		sessionID: h.sessionID, transactionID: h.transactionID, packetID: h.packetID}, resError: code}
	b, err := appendPacket(nil, &p)
	if err != nil {
		return err
	}
	return s.write(b)
}

// goodbye sends a Close without waiting for its Response, before the
// session drops the connection for the given reason.
func (s *session) goodbye(reason closeReason) {
	p := packet{header: header{version: version1, typ: typeClose, flags: flagNetworkByteOrder,
		sessionID: s.sessionID.Load(), packetID: s.packetID.Add(1)}, reason: reason}
	if b, err := appendPacket(nil, &p); err == nil {
		s.write(b)
	}
}

// readBody reads n payload bytes into buf, growing it only as data arrives.
func readBody(r io.Reader, buf []byte, n int) ([]byte, error) {
	if cap(buf) >= n {
		m, err := io.ReadFull(r, buf[:n])
		return buf[:m], err
	}
	buf = buf[:0]
	for len(buf) < n {
		chunk := min(n-len(buf), 8<<10)
		buf = slices.Grow(buf, chunk)
		m, err := io.ReadFull(r, buf[len(buf):len(buf)+chunk])
		buf = buf[:len(buf)+m]
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// incomplete is the error of a read cut short after got of want bytes; a
// PDU that stopped arriving ends the session, saying so to the master.
func (s *session) incomplete(err error, what string, got, want int) error {
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		return readErr(err)
	}
	s.goodbye(reasonTimeouts)
	return fmt.Errorf("agentx: incomplete PDU from the master: %s stopped at %d of %d bytes for %v; closing the session",
		what, got, want, s.pduTimeout)
}

func readErr(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("agentx: master closed the connection: %w", err)
	}
	return fmt.Errorf("agentx: reading from the master: %w", err)
}
