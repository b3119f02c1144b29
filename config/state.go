package config

import "time"

// State configures the persisted state (the state directory's numbering).
type State struct {
	MaxNamesPerContext int `mapstructure:"max_names_per_context"`
	// NameGrace is how long a name whose object is gone keeps its number.
	NameGrace time.Duration `mapstructure:"name_grace"`
}

func (s State) check(bad func(key, format string, args ...any)) {
	// The upper bound keeps one full context well inside the file size
	// the daemon reads back (trustdir.MaxFileSize).
	if n := s.MaxNamesPerContext; n < 1 || n > 200000 {
		bad("state.max_names_per_context", "%d is not from 1 to 200000", n)
	}
	if g := s.NameGrace; g < time.Minute || g > 720*time.Hour {
		bad("state.name_grace", "%v is not from 1m to 720h", g)
	}
}
