package derive

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/expr"
	"github.com/perfagent/subagent/spmi"
)

// benchHost is a host of procs processes (Proc/pid/<n>/cpu counter and
// mem quantity), 16 disks, 8 processors and 4 interfaces, whose counters
// advance by step at each snapshot.
func benchHost(b *testing.B, procs int, at time.Time, step uint64) *spmi.Snapshot {
	bl := spmi.NewBuilder(asn1tree.OID{1, 3, 6, 1, 4, 1, 32473, 1}, nil, at)
	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	ctr := func(name string, asn uint32) spmiwire.StatDesc {
		return spmiwire.StatDesc{Name: name, Descr: name, ASN: asn, Max: 100, Val: ddswire.SiCounter}
	}
	qty := func(name string, asn uint32) spmiwire.StatDesc {
		return spmiwire.StatDesc{Name: name, Descr: name, ASN: asn, Max: 100, Val: ddswire.SiQuantity}
	}
	ctx := func(name string, asn uint32, n int, inst string, stats []spmiwire.StatDesc) {
		c, err := bl.Context(nil, &spmi.CxDesc{Name: name, Descr: name, ASN: asn, Inst: ddswire.SiContInst})
		must(err)
		for i := range n {
			in, err := bl.Instance(c, &spmi.CxDesc{Descr: inst}, fmt.Sprintf("%s%d", inst, i), "", uint32(i+1))
			must(err)
			vals := make([]spmiwire.Value, len(stats))
			for j, s := range stats {
				if s.Val == ddswire.SiCounter {
					vals[j] = spmiwire.Uint(uint64(i+j)*1000 + step*uint64(i%7+1))
				} else {
					vals[j] = spmiwire.Int(int64(i + j))
				}
			}
			must(bl.Stats(in, stats, vals))
		}
	}
	ctx("Proc", 10, procs, "p", []spmiwire.StatDesc{ctr("cpu", 1), qty("mem", 2)})
	ctx("Disk", 4, 16, "sd", []spmiwire.StatDesc{ctr("busy", 1), ctr("rblk", 2), ctr("wblk", 3)})
	ctx("CPU", 1, 8, "cpu", []spmiwire.StatDesc{ctr("idle", 1), ctr("user", 2)})
	ctx("LAN", 5, 4, "eth", []spmiwire.StatDesc{ctr("ibyte", 1), ctr("obyte", 2)})
	m, err := bl.Context(nil, &spmi.CxDesc{Name: "Mem", Descr: "Mem", ASN: 2})
	must(err)
	must(bl.Stats(m, []spmiwire.StatDesc{qty("free", 1), qty("size", 2)}, []spmiwire.Value{spmiwire.Int(40), spmiwire.Int(100)}))
	return bl.Finish()
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchDefs are n derived statistics and n alarms: every procEvery-th
// of each reads all the processes, the others the disks, processors,
// interfaces and memory.
func benchDefs(b *testing.B, n, procEvery int) ([]Derived, []Alarm) {
	host := []string{"sum(Disk/*/busy)", "Disk/*/rblk + Disk/*/wblk", "avg(CPU/*/idle)", "LAN/*/ibyte + LAN/*/obyte",
		"Mem/free / Mem/size * 100"}
	hostAlarm := []string{"Disk/*/busy > 90", "avg(CPU/*/idle) < 10", "Mem/free / Mem/size < 0.1", "LAN/*/ibyte > 1e8"}
	procs, procAlarm := "sum(Proc/*/cpu)", "Proc/*/cpu > 5000"
	var ds []Derived
	var as []Alarm
	parse := func(s string) *expr.Expr {
		x, err := expr.Parse(s)
		if err != nil {
			b.Fatal(err)
		}
		return x
	}
	for i := range n {
		d, a := host[i%len(host)], hostAlarm[i%len(hostAlarm)]
		if procEvery > 0 && i%procEvery == 0 {
			d, a = procs, procAlarm
		}
		ds = append(ds, Derived{Name: fmt.Sprintf("d%d", i), X: parse(d)})
		as = append(as, Alarm{Name: fmt.Sprintf("a%d", i), X: parse(a), For: 3, Keep: 2})
	}
	return ds, as
}

// BenchmarkEvaluate1000Derived1000Alarms is one evaluation of 1,000
// derived statistics and 1,000 alarms over a host of 5,000 processes
// (docs/PERFORMANCE.md): with none reading the processes, with one in
// 100 and one in 10 summing or comparing all 5,000.
func BenchmarkEvaluate1000Derived1000Alarms(b *testing.B) {
	for _, c := range []struct {
		name      string
		procEvery int
	}{{"host-only", 0}, {"procs-1pct", 100}, {"procs-10pct", 10}} {
		b.Run(c.name, func(b *testing.B) {
			ds, as := benchDefs(b, 1000, c.procEvery)
			e, err := New(ds, as, nil)
			if err != nil {
				b.Fatal(err)
			}
			// Ten snapshots a second apart, evaluated in turn; the wrap
			// back to the first (one evaluation in ten) has no rates.
			t0 := time.Unix(1_700_000_000, 0)
			var snaps []*spmi.Snapshot
			for i := range 10 {
				snaps = append(snaps, benchHost(b, 5000, t0.Add(time.Duration(i)*time.Second), uint64(i)))
			}
			e.Evaluate(snaps[0])
			b.ReportAllocs()
			cpu0 := cpuTime(b)
			n := 0
			for i := 1; b.Loop(); i++ {
				e.Evaluate(snaps[i%len(snaps)])
				n++
			}
			// CPU time, not wall time: the machine may be shared.
			b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(n)/1e6, "cpu-ms/op")
		})
	}
}
