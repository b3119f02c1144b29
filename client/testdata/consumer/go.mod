// A consumer in a module of its own, as docs/CONSUMERS.md shows one: it
// requires the client module and, through it, golang.org/x/sys alone. The
// replace points at the checkout (the tests rewrite it to an absolute
// path); with a published version it is not needed.
module example.com/consumer

go 1.22

require github.com/perfagent/subagent/client v0.0.0-00010101000000-000000000000

require golang.org/x/sys v0.30.0 // indirect

replace github.com/perfagent/subagent/client => ../..
