package ddswire

import (
	"errors"
	"io"

	"github.com/perfagent/subagent/client/spmierr"
)

// A frame is an 8-byte head, then the body:
//
//	u32 body length (at most Limits.MaxFrame)
//	u16 message type
//	u16 reserved, 0

// Marshal encodes m as one frame, refusing what the daemon would refuse to
// decode (oversized strings, counts or frame).
func Marshal(m Message, lim Limits) ([]byte, error) {
	lim = lim.norm()
	if !m.Type().known() {
		return nil, spmierr.Errorf(spmierr.SiBadArgument, "cannot send a message of type %v", m.Type())
	}
	e := &enc{b: make([]byte, frameHead, 256), at: where{{m.Type().String(), -1}}}
	m.encode(e, lim)
	if e.err != nil {
		return nil, e.err
	}
	n := len(e.b) - frameHead
	if n > lim.MaxFrame {
		return nil, spmierr.Errorf(spmierr.SiBadArgument, "%s is %d bytes, at most %d allowed in a frame", m.Type(), n, lim.MaxFrame)
	}
	le.PutUint32(e.b[0:], uint32(n))
	le.PutUint16(e.b[4:], uint16(m.Type()))
	le.PutUint16(e.b[6:], 0)
	return e.b, nil
}

// ReadFrame reads one frame. A clean end of stream before its first byte
// is io.EOF (the peer closed); a partial frame is io.ErrUnexpectedEOF.
// The length is checked before the body is allocated.
func ReadFrame(r io.Reader, lim Limits) (MsgType, []byte, error) {
	lim = lim.norm()
	var h [frameHead]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, nil, err
	}
	n, t, res := le.Uint32(h[0:]), MsgType(le.Uint16(h[4:])), le.Uint16(h[6:])
	switch {
	case res != 0:
		return 0, nil, spmierr.Errorf(spmierr.SiBadArgument, "frame head: reserved field is %d, must be 0", res)
	case !t.known():
		return 0, nil, spmierr.Errorf(spmierr.SiBadArgument, "frame head: unknown message type %#x", uint16(t))
	case uint64(n) > uint64(lim.MaxFrame):
		return 0, nil, spmierr.Errorf(spmierr.SiBadArgument, "frame head: %s of %d bytes, at most %d allowed", t, n, lim.MaxFrame)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return 0, nil, err
	}
	return t, body, nil
}

// ReadMessage reads and decodes one frame.
func ReadMessage(r io.Reader, lim Limits) (Message, error) {
	t, body, err := ReadFrame(r, lim)
	if err != nil {
		return nil, err
	}
	return Decode(t, body, lim)
}

// WriteMessage marshals m and writes it in one Write.
func WriteMessage(w io.Writer, m Message, lim Limits) error {
	b, err := Marshal(m, lim)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}
