// Package client is the root of the client module
// (github.com/perfagent/subagent/client): what Dynamic Data Suppliers and
// ARM-instrumented Go programs import, apart from the daemon, so that
// they depend on nothing beyond the standard library and golang.org/x/sys
// (docs/CLIENT.md). It holds no code itself:
//
//   - ddsclient: the DDS supplier library (docs/DDS.md);
//   - arm and armring: the ARM API and its shared file (docs/ARM.md);
//   - ddswire: the DDS formats the library shares with the daemon;
//   - spmierr: the SPMI error type and codes both return;
//   - trustdir: the trust checks of the daemon's run directory;
//   - rundir: where the run directory is, in the one order of the
//     daemon, the CLI and every client library.
//
// The daemon's module requires this one through a replace directive to
// the client directory of the same checkout; the module's go.mod says
// which Go and golang.org/x/sys releases it needs, and why.
package client
