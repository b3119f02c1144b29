// Package dds is the daemon's side of the Dynamic Data Supplier interface
// (docs/DDS.md): the server on the daemon's Unix socket that registers
// suppliers, maps their shared files and checks they are alive, and the
// provider that serves their values under DDS.
//
// The formats a supplier library shares with the daemon, the shared file
// and the registration protocol, are package ddswire of the client module
// (client/ddswire), which suppliers import without the daemon; this
// package uses them as they are (one name each) and adds
// what only a reader does: values read from the live mapping with aligned
// atomics (ReadValue, ReadConsistent), the header fields the daemon sets,
// and the volatile slot allocator. A fault on a file truncated by its
// owner becomes an error for that supplier instead of killing the daemon.
package dds
