// Package schema declares the objects the running daemon and the
// generated module (package mib) must agree on: the notifications and the
// objects they carry (hotsets, tree changes, alarms), the writable tables
// with the ranges and defaults a SET is checked against, the columns of
// the notification outcome table, and the SYNTAX of a statistic.
//
// The daemon builds its notifications and writable columns from these
// declarations, and the generator writes the module from the same ones,
// so that agent and module cannot drift apart. It holds no MIB text
// writer: how the module spells them is package mib's, which the daemon
// does not import.
package schema
