// Package libspmi holds the C library libSpmi (src/, built by `make
// libspmi` into bin/libSpmi.so and bin/libSpmi.a), its headers
// (include/spmi_dds.h, include/sys/Spmidef.h), and the Go tests that prove it against the real daemon
// (packages dds and control), which also build the guide's C samples
// (samples/spmi at the top of the tree). The Go package itself has no code.
//
// The sources are in two halves over a shared part (src/: errors, the
// one lock, a buffer, the sockets, and SpmiExit, which ends both roles):
// the supplier half (src/supplier) and the consumer half (src/consumer),
// each in layers that call only downwards; neither half calls the other
// (TestCSourcesCallNoCircle, TestCHalvesAreApart). Internal names say
// whose they are: spmi_* the shared part's, dds_* the supplier's, cons_*
// the consumer's (TestCNamesCarryTheirPart).
//
// The supplier half implements the SPMI guide's supplier API declared in
// include/spmi_dds.h: SpmiDdsInit, SpmiDdsAddCx, SpmiDdsDelCx,
// SpmiExit, SpmiErrno and SpmiErrmsg, plus the extensions SpmiDdsCheck
// and SpmiDdsBegin/SpmiDdsEnd (a batch of updates served whole). It
// speaks the registration protocol of docs/DDS.md byte for byte as the Go
// library (client/ddsclient) does: SpmiDdsInit lays out the data area from the
// guide's tables, creates the shared file (mode 0600, a new inode each
// time), writes the SpmiShare header with the generation stored last,
// connects to the daemon's socket ($SUBAGENT_DDS_SOCKET, else
// $SUBAGENT_RUN_DIR/dds.sock, else the daemon's default run directory),
// and sends Init with the file's descriptor attached (SCM_RIGHTS).
//
// It is written in C, not generated from Go, because a supplier written to
// the guide must link with it using only the system C compiler: C11 and
// libc, no other dependency. It has no thread: the daemon never sends
// anything unasked, so SpmiDdsAddCx, SpmiDdsDelCx and SpmiDdsCheck notice
// a restarted daemon (a non-blocking peek) and register again before their
// request. Updating a value is a plain store into the mapped area, with no
// library call (BenchmarkCSet).
//
// The consumer half implements the guide's consumer API of
// include/sys/Spmidef.h (SpmiInit, traversal, statsets, hotsets) over
// the daemon's control socket (docs/CONSUMERS.md).
//
// internal/ctest builds the library and C programs for the tests of this
// package and of cmd/subagent; test/ holds the C programs.
package libspmi
