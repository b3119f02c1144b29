package rtimearm

import (
	"encoding/binary"
	"strings"
	"time"

	"github.com/perfagent/subagent/armring"
)

// app is an application, shared by every process that registers its key.
type app struct {
	key, descr string
	uid        uint32 // of the process that registered it first
	trans      map[string]*tran
	order      []*tran
	live       int       // live processes that registered it
	idleSince  time.Time // when live fell to 0
	gone       bool      // dropped: deleted or evicted
}

// tran holds the statistics of one application/transaction pair, summed
// over every process that measures it.
type tran struct {
	app                *app
	uid                uint32 // of the process that registered it first
	key, descr, detail string // detail is kept from the first registration
	types              [armring.NumFields]uint32
	names              [armring.NumFields]string

	resptime, respmax, respmin uint64 // ms, successful instances
	respavg                    float64
	count, aborted, failed     uint64
	lost, correlated           uint64
	parent                     string
	win                        *window
	metrics                    [armring.NumFields]metric
}

// metric keeps what outlives the window of one application-defined field;
// the window holds the per-interval aggregates.
type metric struct {
	seen    bool
	total   float64 // counters: everything charged since the daemon started
	last    float64 // gauges
	hasLast bool    // a gauge value was seen (GaugeDivr32 with divisor 0 is not)
	text    string  // String8, String32
	lastID  uint64  // numeric ids
}

// observe adds one completed instance.
func (t *tran) observe(r *armring.Record, now time.Time, weight float64, span time.Duration) {
	if t.win == nil {
		t.win = newWindow(span)
	}
	good := r.Status == armring.Good
	dur := time.Duration(r.Dur)
	k := t.win.add(now, good, dur)
	switch r.Status {
	case armring.Abort:
		t.aborted++
	case armring.Failed:
		t.failed++
	default:
		ms := uint64(dur / time.Millisecond)
		fms := float64(dur) / float64(time.Millisecond)
		t.resptime = ms
		if t.count == 0 {
			t.respavg, t.respmin, t.respmax = fms, ms, ms
		} else {
			t.respavg = weight*t.respavg + (1-weight)*fms
			t.respmin, t.respmax = min(t.respmin, ms), max(t.respmax, ms)
		}
		t.count++
	}
	if r.Flags&armring.FlagParent != 0 {
		t.correlated++
	}
	for i := range armring.NumFields {
		if r.Mask&(1<<i) != 0 && t.types[i] != 0 {
			if v, ok := t.metrics[i].add(t.types[i], r, i); ok {
				t.win.addField(k, i, v)
			}
		}
	}
}

// add records field i of r and returns the value the window aggregates,
// ok only for counters and gauges.
func (m *metric) add(typ uint32, r *armring.Record, i int) (v float64, ok bool) {
	m.seen = true
	if typ == armring.String32 {
		m.text = strings.TrimRight(string(r.Str[:]), " \x00")
		return 0, false
	}
	raw := r.Values[i]
	lo, hi := uint32(raw), uint32(raw>>32)
	switch typ {
	case armring.Counter32:
		v = float64(lo)
	case armring.Counter64:
		v = float64(raw)
	case armring.CntrDivr32:
		if hi == 0 {
			return 0, false
		}
		v = float64(lo) / float64(hi)
	case armring.Gauge32:
		v = float64(int32(lo))
	case armring.Gauge64:
		v = float64(int64(raw))
	case armring.GaugeDivr32:
		if hi == 0 {
			return 0, false
		}
		v = float64(int32(lo)) / float64(hi)
	case armring.NumericID32:
		m.lastID = uint64(lo)
		return 0, false
	case armring.NumericID64:
		m.lastID = raw
		return 0, false
	case armring.String8:
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], raw)
		m.text = strings.TrimRight(string(b[:]), " \x00")
		return 0, false
	default:
		return 0, false
	}
	if isCounter(typ) {
		m.total += v
	} else {
		m.last, m.hasLast = v, true
	}
	return v, true
}

func isCounter(typ uint32) bool {
	return typ == armring.Counter32 || typ == armring.Counter64 || typ == armring.CntrDivr32
}
