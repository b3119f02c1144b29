// Package armring is the shared-memory format between an ARM-instrumented
// process (libarm in C, package arm in Go) and the daemon (package
// rtimearm), and the small registration protocol on the daemon's arm.sock
// (docs/ARM.md).
//
// The daemon creates one file per process (a sealed memfd), sized from its
// configuration, and passes it over the socket. The process publishes its
// application and transaction names in two tables of the file and posts
// one record per completed transaction instance to a bounded lock-free
// ring (a sequence number per slot: many producers, one consumer). Posting
// is a few atomic operations on the mapping: no system call, no lock; a
// full ring drops the record and counts it.
//
// Everything the daemon reads from a file was written by another process,
// so the decoders here take bytes, check every field and return errors
// naming what was wrong; they never trust a count, index or string.
package armring
