// Package armtest is for tests only: it runs the daemon's side of ARM (an
// rtimearm Registry and Server on arm.sock in a temporary directory) for
// the tests and benchmarks of the ARM libraries in Go (client/arm, tested
// in rtimearm) and C (libarm), reads the statistics it serves, and holds
// the shipped and tuned variants the Go and C Start/Stop benchmarks share.
// It is the one copy of what those packages each had their own of; it
// imports rtimearm, so rtimearm's tests that use it are its external ones.
package armtest

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/arm"
	"github.com/perfagent/subagent/client/armring"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/config"
	"github.com/perfagent/subagent/rtimearm"
	"github.com/perfagent/subagent/spmi"
)

// OpenWait bounds how long a test's agent waits to register (Options.Wait
// of package arm): a loaded machine may take longer than one attempt's 2 s.
const OpenWait = 2 * time.Minute

// Options are what a test chooses of its daemon.
type Options struct {
	Geometry  armring.Geometry   // of each process's ring
	Limits    rtimearm.Limits    // of a new registry
	Registry  *rtimearm.Registry // nil: a new one with Limits, weight 75 and a minute's window
	Logger    *slog.Logger       // nil: nowhere
	IOTimeout time.Duration      // for the Hello; 0: the server's default
	Dir       string             // holds arm.sock; "": a new temporary directory
}

// Daemon is a running server and the registry it feeds.
type Daemon struct {
	Dir    string
	Socket string // Dir/arm.sock
	Reg    *rtimearm.Registry
	Srv    *rtimearm.Server
	tb     testing.TB
}

// Start serves arm.sock until the test ends (or Srv.Close); the cleanup
// fails the test if Serve does not return after Close.
func Start(tb testing.TB, o Options) *Daemon {
	tb.Helper()
	if o.Dir == "" {
		o.Dir = tb.TempDir()
	}
	reg := o.Registry
	if reg == nil {
		reg = rtimearm.NewRegistry(o.Limits, 75, time.Minute, nil, o.Logger)
	}
	sock := filepath.Join(o.Dir, "arm.sock")
	srv, err := rtimearm.NewServer(rtimearm.ServerConfig{Socket: sock, Geometry: o.Geometry, IOTimeout: o.IOTimeout, Logger: o.Logger}, reg)
	if err != nil {
		tb.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve() }()
	tb.Cleanup(func() {
		srv.Close()
		select {
		case <-done:
		case <-time.After(time.Minute):
			tb.Error("Serve did not return after Close")
		}
	})
	return &Daemon{Dir: o.Dir, Socket: sock, Reg: reg, Srv: srv, tb: tb}
}

// Snapshot is what the daemon serves now.
func (d *Daemon) Snapshot() *spmi.Snapshot { return Collect(d.tb, d.Reg) }

// Stat is path's value now; the test fails if it is not served.
func (d *Daemon) Stat(path string) spmiwire.Value { return Stat(d.tb, d.Snapshot(), path) }

// Collect is what reg serves now, as the daemon builds it (without
// numbering kept from one collection to the next).
func Collect(tb testing.TB, reg *rtimearm.Registry) *spmi.Snapshot {
	tb.Helper()
	return CollectNum(tb, reg, nil, time.Now())
}

// CollectNum is what reg serves at now, numbering application instances
// with num, which outlives one collection as the daemon's does.
func CollectNum(tb testing.TB, reg *rtimearm.Registry, num *spmi.Numbering, now time.Time) *spmi.Snapshot {
	tb.Helper()
	b := spmi.NewBuilder(asn1tree.OID{1, 3, 6, 1, 4, 1, 32473, 1}, num, now)
	if err := reg.Provider().Collect(b); err != nil {
		tb.Fatal(err)
	}
	return b.Finish()
}

// Stat is path's value in s; the test fails if it is not served.
func Stat(tb testing.TB, s *spmi.Snapshot, path string) spmiwire.Value {
	tb.Helper()
	n, err := s.Lookup(path)
	if err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	return n.Value
}

// RingsMapped counts the daemon's rings (memfds named subagent-arm) that
// process pid maps.
func RingsMapped(tb testing.TB, pid int) int {
	tb.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		tb.Fatal(err)
	}
	files := map[string]bool{}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 6 && strings.HasPrefix(f[5], "/memfd:subagent-arm") {
			files[f[3]+" "+f[4]] = true
		}
	}
	return len(files)
}

// StartStop runs bench as a sub-benchmark per variant, each against its
// own daemon started with o and the variant's ring slots, draining in the
// background at the variant's interval: "shipped", the built-in
// configuration's arm.ring_slots and arm.drain_interval, and "tuned", 64 Ki
// slots and 1 ms. The Go and C Start/Stop benchmarks compare the same.
func StartStop(b *testing.B, o Options, bench func(*testing.B, *Daemon)) {
	c, err := config.Load(nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, v := range []struct {
		name  string
		slots int
		every time.Duration
	}{{"shipped", c.ARM.RingSlots, c.ARM.DrainInterval}, {"tuned", 1 << 16, time.Millisecond}} {
		b.Run(v.name, func(b *testing.B) {
			o := o
			o.Geometry.Slots = uint32(v.slots)
			d := Start(b, o)
			ctx, stop := context.WithCancel(context.Background())
			defer stop()
			go d.Reg.DrainEvery(ctx, v.every)
			bench(b, d)
		})
	}
}

// Edge is a row of the call graph, RTime/Calls, as served.
type Edge struct {
	Parent, Child   string
	Count, Failures uint64
	Total, Mean     float64 // ms
	Share           float64 // percent; NaN when not served
	ShareUnmeasured bool
}

// Edges lists the rows of RTime/Calls in s, by parent then child.
func Edges(tb testing.TB, s *spmi.Snapshot) []Edge {
	tb.Helper()
	calls, err := s.Lookup("RTime/Calls/")
	if err != nil {
		tb.Fatalf("RTime/Calls: %v", err)
	}
	var out []Edge
	for _, n := range calls.Children {
		if !n.Instance {
			continue
		}
		v := func(stat string) spmiwire.Value { return Stat(tb, s, n.Path+stat) }
		share := v("share")
		out = append(out, Edge{Parent: v("parent").TextValue(), Child: v("child").TextValue(),
			Count: v("count").Uint64(), Failures: v("failures").Uint64(), Total: v("resptotal").Float64(),
			Mean: v("respmean").Float64(), Share: share.Float64(), ShareUnmeasured: !share.OK()})
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Parent+"\x00"+out[i].Child < out[j].Parent+"\x00"+out[j].Child
	})
	return out
}

// Agent is a Go ARM agent of the test registered with d (the test fails
// otherwise), closed when the test ends.
func (d *Daemon) Agent() *arm.Agent {
	d.tb.Helper()
	a := arm.Open(&arm.Options{Socket: d.Socket, Wait: OpenWait})
	d.tb.Cleanup(a.Close)
	if !a.Connected() {
		d.tb.Fatal("the agent did not register")
	}
	return a
}

// Checkout is a registry on the clock now with objectives o, serving
// arm.sock, and the transaction ShopFront/Checkout of an agent registered
// with it, which the registry has seen (so its library has the
// objectives' thresholds).
func Checkout(tb testing.TB, o rtimearm.Objectives, now func() time.Time) (*rtimearm.Registry, *arm.Tran) {
	tb.Helper()
	reg := rtimearm.NewRegistry(rtimearm.Limits{MaxApps: 8, MaxTrans: 16}, 75, time.Minute, nil, nil)
	reg.SetClock(now)
	reg.SetObjectives(o, nil)
	d := Start(tb, Options{Geometry: armring.Geometry{Slots: 64, Apps: 4, Trans: 4}, Registry: reg})
	tr := d.Agent().App("Shop Front", "*").Transaction("Checkout", "")
	reg.DrainAll()
	return reg, tr
}
