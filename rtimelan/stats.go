// Package rtimelan measures network response time to chosen hosts with
// ICMP echo, as the PTX guide's IP response time daemon did, and serves
// the results as the RTime/LAN contexts of the SPMI hierarchy: one
// instance per host with its latest and weighted-average round trip, the
// share of round trips in four bands, and request and response counters.
//
// The scheduler, the matching of replies and the statistics are plain
// state machines driven by the caller's clock, so that the rate limit and
// the bands are tested without waiting; only pinger.go touches sockets.
package rtimelan

import "time"

// Band limits of the guide: below 10 ms, 10 to 20 ms, 20 to 100 ms, and
// 100 ms or more.
var bandLimits = [3]time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 100 * time.Millisecond}

// Stats are one host's measurements.
type Stats struct {
	Requests  uint64
	Responses uint64
	Last      time.Duration // latest round trip
	Avg       float64       // weighted average, milliseconds
	Bands     [4]uint64     // round trips below 10, below 20, below 100, at or above 100 ms
}

// Sent counts a request, answered or not.
func (s *Stats) Sent() { s.Requests++ }

// Observe adds a round trip; weight is the percentage the previous average
// keeps (the guide's weight, 75 by default). The first observation is the
// average.
func (s *Stats) Observe(rtt time.Duration, weight int) {
	ms := float64(rtt) / float64(time.Millisecond)
	if s.Responses == 0 {
		s.Avg = ms
	} else {
		w := float64(weight) / 100
		s.Avg = w*s.Avg + (1-w)*ms
	}
	s.Responses++
	s.Last = rtt
	b := len(bandLimits)
	for i, lim := range bandLimits {
		if rtt < lim {
			b = i
			break
		}
	}
	s.Bands[b]++
}

// LastMillis is the latest round trip in milliseconds; resptime serves it
// with 3 decimals (microseconds), since loopback and LAN round trips are
// well below one millisecond.
func (s *Stats) LastMillis() float64 {
	return float64(s.Last) / float64(time.Millisecond)
}

// BandPercent is the share of observed round trips in band i, in percent
// (0 before the first response).
func (s *Stats) BandPercent(i int) float64 {
	var n uint64
	for _, c := range s.Bands {
		n += c
	}
	if n == 0 {
		return 0
	}
	return 100 * float64(s.Bands[i]) / float64(n)
}
