// Package libarm holds the C ARM 2.0 library (arm.h, src/, built by
// `make libarm` into bin/libarm.so and bin/libarm.a). Its Go tests compile
// it and the programs that use it (the SDK's sample and the load programs,
// samples/arm at the top of the tree) with the system C compiler and run
// them against the daemon's ARM server.
//
// The sources are layers that call only downwards
// (TestCSourcesCallNoCircle): state.c (the process's state, its setup from
// the environment, the clock, the id table) at the bottom; ring.c and
// log.c above it, buffer.c above those; conn.c (registration and the
// reconnecting thread); api.c (arm_init, arm_getid, arm_end) and inst.c
// (the hot calls) on top.
package libarm
