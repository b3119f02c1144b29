// Package libarm holds the C ARM 2.0 library (arm.h, src/, built by
// `make libarm` into bin/libarm.so and bin/libarm.a) and the SDK's sample
// programs (samples/). Its Go tests compile them with the system C
// compiler and run them against the daemon's ARM server.
package libarm
