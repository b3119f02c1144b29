// Package libarm holds the C ARM 2.0 library (arm.h, src/, built by
// `make libarm` into bin/libarm.so and bin/libarm.a). Its Go tests compile
// it and the programs that use it (the SDK's sample and the load programs,
// samples/arm at the top of the tree) with the system C compiler and run
// them against the daemon's ARM server.
package libarm
