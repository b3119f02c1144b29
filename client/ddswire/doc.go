// Package ddswire holds the formats of the Dynamic Data Supplier interface
// that a supplier library and the daemon share: the shared-memory file a
// supplier writes its values into (header layout, offsets, the header
// fields changed while it runs), and the registration protocol it speaks
// over the daemon's Unix socket, with the checks both sides apply
// (docs/DDS.md). The daemon's package dds uses them as they are and adds
// what only a daemon does: reading and serving the values.
//
// The codecs are written by hand, with no generator or serialization
// library, for three reasons: a small C library must implement the same
// bytes with nothing but libc; the header must be byte-for-byte the C
// SpmiShare struct that suppliers dereference directly; and the daemon reads
// input from other processes, so every length, count and offset is checked
// before it is used, with errors that name what was wrong.
//
// The package is pure: it maps nothing, opens no socket of its own and
// keeps no state beyond what a caller passes in. Reads and writes of the
// live mapping go through the header accessors, which use aligned atomics
// and turn a fault on a truncated file into an error.
//
// ProcStart reads field 22 of /proc/<pid>/stat itself rather than through
// a procfs library: this package is part of the client module, which
// suppliers import and which depends on nothing beyond the standard
// library and golang.org/x/sys, and one field of one line is a few lines
// of parsing.
package ddswire
