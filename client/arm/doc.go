// Package arm measures transactions of a Go program for the subagent
// daemon, with the model of the ARM 2.0 API: register an application and
// its transactions (with metric declarations), then start and stop
// transaction instances with a status and metric values; request and pass
// correlators to link a parent to its children.
//
//	ag := arm.Open(nil)
//	app := ag.App("Parts Inventory Manager 1.1", "*")
//	q := app.Transaction("Part Number Query", "Call to Server XYZ")
//	h := q.Start()
//	... the work ...
//	h.Stop(arm.Good)
//
// Start and Stop allocate nothing and make no system call: a completed
// instance is added to its transaction's totals in the process's shared
// file (package armring), which the daemon takes; only an instance with
// metric values or a parent's correlator also posts a record to the ring. When the daemon is not running, everything
// still works and measures nothing; the package reconnects by itself and
// re-registers its names when the daemon comes back.
package arm
