// Package rtimearm is the daemon's side of ARM 2.0: it accepts
// instrumented processes on arm.sock (one sealed memfd file each, format
// in package armring), drains their rings, keeps the applications and
// transactions by the PTX naming rules, and serves them as
// RTime/ARM/<application>/<transaction> with the PTX metrics (resptime,
// respavg, count, aborted, failed, respmax, respmin), percentiles and rate
// over a rolling window, instances in flight, lost and correlated ones,
// and the application-defined metrics (docs/ARM.md).
//
// The daemon creates each file rather than accepting one, so it decides
// the size (arm.ring_slots and the table limits) and seals it: a process
// can write its records but never resize the mapping under the daemon.
package rtimearm
