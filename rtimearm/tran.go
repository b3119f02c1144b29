package rtimearm

import (
	"encoding/binary"
	"math"
	"strings"
	"time"

	"github.com/perfagent/subagent/client/armring"
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
	obj                        Matched // its service level objectives; nil: none
	sumNs                      float64 // response times of the successful instances, for the call graph's shares
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

// observe adds the completions taken from one process at now, made since
// from. respavg moves as PTX's per-instance average would if each of the
// n instances had taken their mean: weight^n of the previous average.
func (t *tran) observe(tot *armring.Totals, now, from time.Time, weight float64, span time.Duration) {
	if t.win == nil {
		t.win = newWindow(span)
	}
	t.win.add(now, from, tot)
	t.aborted += tot.Aborted
	t.failed += tot.Failed
	if tot.Good == 0 {
		return
	}
	const ms = uint64(time.Millisecond)
	t.sumNs += float64(tot.Sum)
	mean := float64(tot.Mean) / float64(ms)
	t.resptime = tot.Last / ms
	if t.count == 0 {
		t.respavg, t.respmin, t.respmax = mean, tot.Min/ms, tot.Max/ms
	} else {
		k := math.Pow(weight, float64(tot.Good))
		t.respavg = k*t.respavg + (1-k)*mean
		t.respmin, t.respmax = min(t.respmin, tot.Min/ms), max(t.respmax, tot.Max/ms)
	}
	t.count += tot.Good
}

// observeRecord adds what a record carries beyond the totals: metric values and
// the parent's correlator.
func (t *tran) observeRecord(r *armring.Record, now time.Time, span time.Duration) {
	if t.win == nil {
		t.win = newWindow(span)
	}
	if r.Flags&armring.FlagParent != 0 {
		t.correlated++
	}
	if r.Mask == 0 {
		return
	}
	k := t.win.slot(now)
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
