// Package armring is the shared-memory format between an ARM-instrumented
// process (libarm in C, package arm in Go) and the daemon (package
// rtimearm), and the small registration protocol on the daemon's arm.sock
// (docs/ARM.md).
//
// The daemon creates one file per process (a sealed memfd), sized from its
// configuration, and passes it over the socket. The process publishes its
// application and transaction names in two tables of the file and adds
// each completed transaction instance to its transaction's totals (counts
// by status, a response-time histogram, sum, minimum and maximum), which
// the daemon takes with atomic exchanges: nothing overflows, however fast
// a process completes. An instance with metric values or a parent's
// correlator also posts a record to a bounded lock-free ring (a sequence
// number per slot: many producers, one consumer); a full ring drops the
// record and counts it. All of it is a few atomic operations on the
// mapping: no system call, no lock.
//
// Everything the daemon reads from a file was written by another process,
// so the decoders here take bytes, check every field and return errors
// naming what was wrong; they never trust a count, index or string.
package armring
