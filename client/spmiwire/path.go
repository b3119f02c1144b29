package spmiwire

import "strings"

// CleanPath is a path as the daemon reads it: without the white space and
// the slashes around it ("/CPU/cpu0/ " is "CPU/cpu0"). The daemon, the Go
// consumer and the MIB generator compare paths in this form.
func CleanPath(p string) string { return strings.Trim(strings.TrimSpace(p), "/") }
