// The module that suppliers and instrumented programs import (docs/CLIENT.md):
// the Go DDS supplier library, the Go ARM package and what they share with
// the daemon. Nothing beyond the standard library and golang.org/x/sys.
//
// go 1.22: the oldest release with what the code uses (math/rand/v2 and
// range over an integer). golang.org/x/sys v0.30.0 is the last release
// whose own go.mod asks for no newer Go (from v0.31.0 on it requires Go
// 1.23), so the module builds with Go 1.22; it has every call used here.
// A program that requires a newer x/sys gets that one by minimal version
// selection. The benchmarks (testing.B.Loop) need Go 1.24.
module github.com/perfagent/subagent/client

go 1.22

require golang.org/x/sys v0.30.0
