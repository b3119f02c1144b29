// Package configs carries the default configuration file, embedded so that
// the daemon runs on its defaults with no file installed.
package configs

import _ "embed"

// Default is configs/subagent.yaml: every setting with its default value.
//
//go:embed subagent.yaml
var Default []byte
