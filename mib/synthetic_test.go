package mib_test

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/spmi"
)

var testBase = asn1tree.MustParse("1.3.6.1.4.1.32473.1")

// syntheticProvider adds a small tree with every kind of node the
// generator meets: plain, configuration-time and continuous instantiable
// contexts, an instantiable context without instances, a fixed context
// numbered 0 among instances, and every statistic type.
type syntheticProvider struct{}

func (syntheticProvider) Name() string { return "synthetic" }

func (syntheticProvider) Collect(b *spmi.Builder) error {
	var err error
	cx := func(parent *spmi.Node, d spmi.CxDesc) *spmi.Node {
		n, e := b.Context(parent, &d)
		err = errors.Join(err, e)
		return n
	}
	stats := func(n *spmi.Node, ds []spmiwire.StatDesc, vs ...spmiwire.Value) {
		if n != nil {
			err = errors.Join(err, b.Stats(n, ds, vs))
		}
	}
	inst := func(parent *spmi.Node, name string, asn uint32) *spmi.Node {
		n, e := b.Instance(parent, &spmi.CxDesc{Descr: "Processor"}, name, "", asn)
		err = errors.Join(err, e)
		return n
	}
	cpuStats := []spmiwire.StatDesc{
		{Name: "user", Descr: "CPU time in user mode", ASN: 1, Max: 100, Val: ddswire.SiCounter, Data: spmiwire.SiFloat, Scale: 2, Units: "seconds"},
		{Name: "idle", Descr: "percent idle", ASN: 4, Max: 100, Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 2, Units: "percent"},
	}
	cpu := cx(nil, spmi.CxDesc{Name: "CPU", Descr: "Processor use", ASN: 1, Inst: ddswire.SiCfgInst})
	stats(cx(cpu, spmi.CxDesc{Name: "total", Descr: "All processors", ASN: 0}), cpuStats, spmiwire.Float(3), spmiwire.Float(97.5))
	for i, name := range []string{"cpu0", "cpu1"} {
		stats(inst(cpu, name, uint32(i+1)), cpuStats, spmiwire.Float(1.5), spmiwire.Float(98.25))
	}
	mem := cx(nil, spmi.CxDesc{Name: "Mem", Descr: "Memory", ASN: 2})
	stats(cx(mem, spmi.CxDesc{Name: "Real", Descr: "Real memory", ASN: 1}), []spmiwire.StatDesc{
		{Name: "size", Descr: "Size of real memory", ASN: 1, Max: 1 << 40, Val: ddswire.SiQuantity, Units: "KiB", Wide: true},
		{Name: "%free", Descr: "% memory which is free", ASN: 3, Max: 100, Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 1, Units: "percent"},
		{Name: "temp", Descr: "Board \"temperature\"", ASN: 4, Min: -40, Max: 100, Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 1, Units: "degrees Celsius"},
		{Name: "avail", Descr: "Available memory, wide and scaled", ASN: 5, Max: 1 << 40, Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 2, Units: "KiB", Wide: true},
		{Name: "pages", Descr: "Pages paged in", ASN: 6, Max: 1000, Val: ddswire.SiCounter, Units: "pages"},
		{Name: "frag", Descr: "Fragmentation index", ASN: 7, Max: 1000, Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 3},
	}, spmiwire.Uint(8<<30), spmiwire.Float(12.34), spmiwire.Float(-5.5), spmiwire.Float(1234.56), spmiwire.Uint(77), spmiwire.Float(0.25))
	cx(nil, spmi.CxDesc{Name: "Disk", Descr: "Disks", ASN: 4, Inst: ddswire.SiCfgInst})
	proc := cx(nil, spmi.CxDesc{Name: "Proc", Descr: "Processes", ASN: 10})
	stats(proc, []spmiwire.StatDesc{{Name: "runque", Descr: "Processes ready to run", ASN: 1, Max: 10, Val: ddswire.SiQuantity}}, spmiwire.Uint(2))
	pid := cx(proc, spmi.CxDesc{Name: "pid", Descr: "Processes by PID", ASN: 100, Inst: ddswire.SiContInst})
	for _, p := range []uint32{1, 4242} {
		n, e := b.Instance(pid, &spmi.CxDesc{Descr: "Process"}, itoa(p), "", p)
		err = errors.Join(err, e)
		stats(n, []spmiwire.StatDesc{
			{Name: "cpu", Descr: "CPU time", ASN: 1, Max: 100, Val: ddswire.SiCounter, Units: "ticks"},
			{Name: "name", Descr: "Command name", ASN: 2, Val: ddswire.SiQuantity, Data: spmiwire.SiText},
			{Name: "nice", Descr: "Nice value", ASN: 3, Min: -20, Max: 19, Val: ddswire.SiQuantity},
		}, spmiwire.Uint(5), spmiwire.Text("init"), spmiwire.Int(-5))
	}
	return err
}

// synthetic is the snapshot of syntheticProvider.
func synthetic(t testing.TB) *spmi.Snapshot {
	t.Helper()
	b := spmi.NewBuilder(testBase, nil, time.Unix(0, 0))
	if err := (syntheticProvider{}).Collect(b); err != nil {
		t.Fatal(err)
	}
	return b.Finish()
}

func itoa(n uint32) string { return strconv.FormatUint(uint64(n), 10) }
