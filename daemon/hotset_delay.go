package daemon

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
)

// delayBounds are the upper bounds of the evaluation delay histogram's
// buckets (Agent/hotsets delayle<N>); a last bucket counts the rest.
// Fixed buckets, counted since the start, so that a reader takes the
// difference of two reads and has every evaluation between them: a
// percentile sampled from the last evaluation's delay would miss most.
var delayBounds = []time.Duration{
	time.Millisecond, 5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond,
	50 * time.Millisecond, 100 * time.Millisecond, 500 * time.Millisecond, time.Second,
}

// delayHist counts evaluations by their delay: from when the evaluation
// was due (the interval after the previous one ended) to its events
// handed on, so that an evaluation that starts late counts its wait.
type delayHist struct {
	last, max atomic.Int64 // time.Duration; only run's goroutine stores
	n         [9]atomic.Uint64
}

func (h *delayHist) add(d time.Duration) {
	h.last.Store(int64(d))
	if int64(d) > h.max.Load() {
		h.max.Store(int64(d))
	}
	i := 0
	for i < len(delayBounds) && d > delayBounds[i] {
		i++
	}
	h.n[i].Add(1)
}

// delayStats describe values in the order they are served (ASN 3 on).
func delayStats() []spmiwire.StatDesc {
	sd := []spmiwire.StatDesc{
		{Name: "delayms", Descr: "Last evaluation's delay: from due to its events handed on", ASN: 3, Max: 100, Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 3, Units: "milliseconds"},
		{Name: "delaymaxms", Descr: "Longest evaluation delay since the daemon started", ASN: 4, Max: 100, Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 3, Units: "milliseconds"},
	}
	lo := time.Duration(0)
	for i, b := range delayBounds {
		sd = append(sd, spmiwire.StatDesc{Name: fmt.Sprintf("delayle%d", b.Milliseconds()),
			Descr: fmt.Sprintf("Evaluations with a delay over %d ms, up to %d ms", lo.Milliseconds(), b.Milliseconds()),
			ASN:   uint32(5 + i), Max: 10, Val: ddswire.SiCounter, Units: "evaluations"})
		lo = b
	}
	return append(sd, spmiwire.StatDesc{Name: fmt.Sprintf("delaygt%d", lo.Milliseconds()),
		Descr: fmt.Sprintf("Evaluations with a delay over %d ms", lo.Milliseconds()),
		ASN:   uint32(5 + len(delayBounds)), Max: 10, Val: ddswire.SiCounter, Units: "evaluations"})
}

func (h *delayHist) values() []spmiwire.Value {
	ms := func(d int64) spmiwire.Value { return spmiwire.Float(float64(d) / float64(time.Millisecond)) }
	v := []spmiwire.Value{ms(h.last.Load()), ms(h.max.Load())}
	for i := range h.n {
		v = append(v, spmiwire.Uint(h.n[i].Load()))
	}
	return v
}
