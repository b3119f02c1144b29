// Package expr is the expression language of derived statistics and
// alarms (docs/EXPRESSIONS.md): arithmetic, comparison and boolean
// operators over SPMI paths, where a path with * stands for every
// instance it matches and yields one value per instance, aggregated with
// sum, avg, min, max and count. Counters are read as rates per second
// over the evaluation interval, as `subagent get --interval` prints them.
//
// An expression is parsed once (Parse), which bounds its size and checks
// its types (an aggregation of a vector, rate of a path); paths are
// resolved against each snapshot it is evaluated on, so that a DDS
// statistic that registers later is found then, and a path that matches
// nothing is an evaluation error naming the nearest path that does (as
// hotsets do, hotset.Nearest).
//
// # Why a parser of its own
//
// The candidates compared:
//
//   - expr-lang/expr: a general language (closures, maps, loops through
//     predicates such as all/any/filter over arrays, string functions). Its
//     identifiers cannot hold / or *, so every SPMI path would have to be
//     quoted and looked up through a function, and wildcard instance
//     matching (one value per disk, joined by instance name) would be
//     ours anyway. It bounds runtime with a memory budget and an operation
//     counter, not by construction.
//   - google/cel-go: non-Turing-complete and with a static cost estimator,
//     the best fit for safety, but it pulls in protobuf and ANTLR (several
//     MB of dependencies against the project's short list), and it too has
//     no notion of a path with wildcards or of per-instance vectors.
//   - PromQL's parser (prometheus/promql/parser): its vector matching is
//     what per-instance expressions need, but its selectors are metric
//     names with label matchers, not paths; reusing it means the whole
//     Prometheus module as a dependency, and its functions (range vectors,
//     offsets) have no SPMI meaning.
//
// None of them knows SPMI paths or counters-as-rates, and the language
// needed is small (no variables, no loops, no strings), so it is parsed
// here in a few hundred lines: a recursive-descent parser whose size and
// depth are bounded (MaxSource, MaxNodes, MaxDepth), whose evaluation
// visits each node once, and in which every path's matches are capped at
// MaxInstances: an expression's evaluation cost is at most
// Expr.Bound() = nodes × MaxInstances value operations, known at parse
// time. The fuzz test FuzzParse checks both: no input panics, and no
// evaluation costs more than its bound.
package expr
