// Package dds holds the formats of the Dynamic Data Supplier interface: the
// shared-memory file a supplier writes its values into, and the registration
// protocol it speaks over the daemon's Unix socket (docs/DDS.md).
//
// The codecs are written by hand, with no generator or serialization
// library, for three reasons: a small C library must implement the same
// bytes with nothing but libc; the header must be byte-for-byte the C
// SpmiShare struct that suppliers dereference directly; and the daemon reads
// input from other processes, so every length, count and offset is checked
// before it is used, with errors that name what was wrong.
//
// The package is pure: it maps nothing, opens no socket and keeps no state
// beyond what a caller passes in. Reads and writes of the live mapping go
// through ReadValue and the header accessors, which use aligned atomics and
// turn a fault on a truncated file into an error.
package dds
