package responder

import "github.com/gosnmp/gosnmp"

// response builds a Response message in place: the varbinds are appended
// after a headroom, and the header, whose size depends on theirs, is then
// written into the end of that headroom, so nothing is copied.
type response struct {
	buf       []byte // headroom, then varbinds
	head      int    // size of the headroom
	max       int    // largest message allowed
	version   int
	v3        bool // the PDU only: v3.go wraps it
	community []byte
	id        int32
}

// maxHeader is the largest header before the varbinds, community aside:
// SEQUENCE, version, community tag and length, PDU, 3 INTEGERs, SEQUENCE.
const maxHeader = 6 + 3 + 6 + 6 + 3*6 + 6

func (w *response) reset(q *request, max int) {
	w.head = maxHeader + len(q.community)
	if cap(w.buf) < w.head+max {
		w.buf = make([]byte, w.head, w.head+max)
	}
	w.buf = w.buf[:w.head]
	w.max, w.version, w.community, w.id, w.v3 = max, q.version, q.community, q.id, false
}

func (w *response) mark() int     { return len(w.buf) }
func (w *response) undo(mark int) { w.buf = w.buf[:mark] }
func (w *response) clear()        { w.buf = w.buf[:w.head] }

// lens returns the sizes of the PDU's contents, of the message's contents
// and of the whole message for the varbinds appended so far.
func (w *response) lens(status, index int) (pdu, body, msg int) {
	vbl := len(w.buf) - w.head
	pdu = 2 + intLen(int64(w.id)) + 2 + intLen(int64(status)) + 2 + intLen(int64(index)) +
		1 + lenLen(vbl) + vbl
	if w.v3 {
		return pdu, pdu, 1 + lenLen(pdu) + pdu
	}
	body = 3 + 1 + lenLen(len(w.community)) + len(w.community) + 1 + lenLen(pdu) + pdu
	return pdu, body, 1 + lenLen(body) + body
}

// fits reports whether the message would be within the size limit.
func (w *response) fits(status, index int) bool {
	_, _, msg := w.lens(status, index)
	return msg <= w.max
}

// finish writes the header and returns the message, or nil when it is
// larger than the limit.
func (w *response) finish(status, index int) []byte {
	pdu, body, msg := w.lens(status, index)
	vbl := len(w.buf) - w.head
	if msg > w.max || msg-vbl > w.head {
		return nil
	}
	start := w.head - (msg - vbl)
	h := w.buf[start:start:w.head]
	if !w.v3 {
		h = appendLen(append(h, byte(gosnmp.Sequence)), body)
		h = appendInt(h, byte(gosnmp.Integer), int64(w.version))
		h = appendLen(append(h, byte(gosnmp.OctetString)), len(w.community))
		h = append(h, w.community...)
	}
	h = appendLen(append(h, byte(gosnmp.GetResponse)), pdu)
	h = appendInt(h, byte(gosnmp.Integer), int64(w.id))
	h = appendInt(h, byte(gosnmp.Integer), int64(status))
	h = appendInt(h, byte(gosnmp.Integer), int64(index))
	h = appendLen(append(h, byte(gosnmp.Sequence)), vbl)
	if len(h) != w.head-start { // a size computed wrong: drop, never send garbage
		return nil
	}
	return w.buf[start:]
}
