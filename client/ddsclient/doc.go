// Package ddsclient is the Go library for Dynamic Data Suppliers (DDS): a
// program that adds its own contexts and statistics to the daemon's tree
// (docs/DDS.md). It is part of the client module, which a supplier in
// its own module requires without the daemon's dependencies
// (docs/CLIENT.md).
//
// Declare the tables with NewVendor, Context and the typed statistic
// methods, then Start: the library lays out the data area (one 8-aligned
// 64-bit field per statistic), creates and maps the shared file, and
// registers it over the daemon's socket with the descriptor attached.
//
//	v := ddsclient.NewVendor("IBM", "IBM-defined Dynamic Data-Suppliers", 2)
//	test := v.Context("Test", "Bogus Context Number 1", 220)
//	gadgets := test.Counter("gadgets", "Fake counter value", 1, ddsclient.Range(0, 100))
//	s, err := ddsclient.Start(v, "/var/run/mysupplier.dds", nil)
//	...
//	for !s.GoAway() {
//		s.Update(func() { gadgets.Add(3) })
//		time.Sleep(time.Second)
//	}
//	s.Exit()
//
// Handles (*Counter, *Gauge, *Float) write with one atomic operation on the
// mapped field and make no system call. The daemon declares a supplier dead
// when its time stamp (SiShT) stops changing, so stamp after each batch of
// updates with Update or Stamp, or set Options.AutoStamp to stamp on every
// Set and Add (a clock read and two atomic stores each: about 80 ns
// instead of 5 on amd64).
//
// Values written in one Update are a batch: the daemon serves all of them
// from before the batch or all from after it, never a mix (docs/DDS.md,
// Batches). A batch costs two atomic increments besides its Sets.
//
// Volatile contexts are declared as templates (Vendor.Template) and
// instantiated with Supplier.AddCx, which returns an *Instance whose
// handles point into the slot the daemon allocated.
//
// If the daemon goes away (its socket closes), the mapping stays valid and
// the handles keep working. Check (a non-blocking peek, meant for the main
// loop) or the next AddCx or DelCx reconnects: it publishes a new
// generation in the same file, replays Init and every live AddCx asking
// for the slot each instance had, so handles stay where they are; the new
// daemon publishes each slot as it is, so no value is zeroed or lost,
// Sets racing with the replay included. A daemon
// that refuses a replayed context ends the registration: the library sets
// SiShGoAway and returns SiAssumedDead. There is no background goroutine.
// A supplier the daemon gave up on (SiShGoAway) is not re-registered:
// calls return SiAssumedDead and it should Exit.
//
// Errors from the daemon are *spmierr.Error values carrying its SPMI code
// and message; a lost connection wraps ErrDisconnected.
package ddsclient
