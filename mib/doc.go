// Package mib is the offline module generator: from a served tree (the
// shipped reference, mib/reference.json, or a running daemon's entries)
// it writes the SMIv2 module (`subagent mib`, `make mib`, MIBs/), the
// snmp_exporter configuration and the reference tree itself.
//
// What the running daemon shares with the module, the notifications,
// writable tables, outcome columns and statistic syntaxes, is declared
// in mib/schema, which both import; the daemon never imports this
// package, so the module's text and checks stay out of the agent.
package mib
