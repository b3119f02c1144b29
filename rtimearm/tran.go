package rtimearm

import (
	"encoding/binary"
	"math"
	"strings"
	"time"

	"github.com/perfagent/subagent/armring"
)

// app is an application, shared by every process that registers its key.
type app struct {
	key, descr string
	trans      map[string]*tran
	order      []*tran
}

// tran holds the statistics of one application/transaction pair, summed
// over every process that measures it.
type tran struct {
	app                *app
	key, descr, detail string // detail is kept from the first registration
	types              [armring.NumFields]uint32
	names              [armring.NumFields]string

	resptime, respmax, respmin uint64 // ms, successful instances
	respavg                    float64
	count, aborted, failed     uint64
	lost, correlated           uint64
	inflight                   int64 // summed from the live processes at collection
	parent                     string
	win                        *window
	metrics                    [armring.NumFields]metric
}

// metric aggregates one application-defined field.
type metric struct {
	seen     bool
	sum      float64 // counters
	last     float64 // gauges, ids
	gsum     float64 // gauges: sum of values, for the average
	n        uint64
	min, max float64
	text     string // String8, String32
	lastID   uint64 // numeric ids
}

// observe adds one completed instance.
func (t *tran) observe(r *armring.Record, now time.Time, weight float64, span time.Duration) {
	if t.win == nil {
		t.win = newWindow(span)
	}
	good := r.Status == armring.Good
	dur := time.Duration(r.Dur)
	t.win.add(now, good, dur)
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
			t.metrics[i].add(t.types[i], r, i)
		}
	}
}

func (m *metric) add(typ uint32, r *armring.Record, i int) {
	m.seen = true
	if typ == armring.String32 {
		m.text = strings.TrimRight(string(r.Str[:]), " \x00")
		return
	}
	v := r.Values[i]
	lo, hi := uint32(v), uint32(v>>32)
	var g float64
	switch typ {
	case armring.Counter32:
		m.sum += float64(lo)
		return
	case armring.Counter64:
		m.sum += float64(v)
		return
	case armring.CntrDivr32:
		if hi != 0 {
			m.sum += float64(lo) / float64(hi)
		}
		return
	case armring.Gauge32:
		g = float64(int32(lo))
	case armring.Gauge64:
		g = float64(int64(v))
	case armring.GaugeDivr32:
		if hi == 0 {
			return
		}
		g = float64(int32(lo)) / float64(hi)
	case armring.NumericID32:
		m.lastID = uint64(lo)
		return
	case armring.NumericID64:
		m.lastID = v
		return
	case armring.String8:
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], v)
		m.text = strings.TrimRight(string(b[:]), " \x00")
		return
	}
	if m.n == 0 {
		m.min, m.max = g, g
	}
	m.last, m.gsum, m.n = g, m.gsum+g, m.n+1
	m.min, m.max = math.Min(m.min, g), math.Max(m.max, g)
}
