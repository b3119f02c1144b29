package ddswire

// The unexported names the external tests (package ddswire_test) use;
// they cannot be internal tests, since they import ddswiretest.

var StatStart = statStart

const NumDataTypes = numDataTypes

// Clamped is norm, the codecs' clamping of out-of-range limits.
func (l Limits) Clamped() Limits { return l.norm() }
