// A supplier in a module of its own, as a vendor writes one: it requires
// the client module and, through it, golang.org/x/sys alone. The replace
// points at the checkout (the test rewrites it to an absolute path).
module example.com/supplier

go 1.22

require github.com/perfagent/subagent/client v0.0.0-00010101000000-000000000000

require golang.org/x/sys v0.30.0 // indirect

replace github.com/perfagent/subagent/client => ../..
