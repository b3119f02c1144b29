package hoststats

import (
	"path/filepath"

	"github.com/prometheus/procfs"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/spmi"
)

var (
	memCx     = spmi.CxDesc{Name: "Mem", Descr: "Memory statistics", ASN: spmi.ASNMem, Inst: ddswire.SiNoInst}
	memRealCx = spmi.CxDesc{Name: "Real", Descr: "Physical memory statistics", ASN: 1, Inst: ddswire.SiNoInst}
	memVirtCx = spmi.CxDesc{Name: "Virt", Descr: "Virtual memory management statistics", ASN: 2, Inst: ddswire.SiNoInst}
)

// memVirtStats come from /proc/vmstat; each is the sum of the keys in
// memVirtKeys that the kernel has (older kernels lack some).
var memVirtStats = []spmiwire.StatDesc{
	vmCount("pagein", "KiB paged in from disk by the VMM", 1, "KiB"),
	vmCount("pageout", "KiB paged out to disk by the VMM", 2, "KiB"),
	vmCount("swapin", "Pages swapped in", 3, "pages"),
	vmCount("swapout", "Pages swapped out", 4, "pages"),
	vmCount("faults", "Page faults", 5, "faults"),
	vmCount("majfaults", "Page faults that needed I/O", 6, "faults"),
	vmCount("steal", "Pages reclaimed (stolen) by the VMM", 7, "pages"),
	vmCount("scan", "Pages scanned for reclaim", 8, "pages"),
}

// Reclaim is summed by reclaimer only: the kernel also splits the same
// pages by anon/file (pgsteal_anon, pgsteal_file), which would count twice.
var memVirtKeys = [][]string{
	{"pgpgin"}, {"pgpgout"}, {"pswpin"}, {"pswpout"}, {"pgfault"}, {"pgmajfault"},
	{"pgsteal_kswapd", "pgsteal_direct", "pgsteal_khugepaged", "pgsteal_proactive"},
	{"pgscan_kswapd", "pgscan_direct", "pgscan_khugepaged", "pgscan_proactive"},
}

func vmCount(name, descr string, asn uint32, units string) spmiwire.StatDesc {
	return spmiwire.StatDesc{Name: name, Descr: descr, ASN: asn, Max: 10000, Val: ddswire.SiCounter, Data: spmiwire.SiLong, Units: units}
}

// Sizes are KiB in Gauge32, which covers 4 TiB; larger values are served
// as the Gauge32 maximum (see docs/TREE.md).
var memRealStats = []spmiwire.StatDesc{
	memKiB("size", "Size of physical memory", 1),
	memKiB("free", "Free physical memory", 2),
	{Name: "%free", Descr: "Free memory in percent of size", ASN: 3, Max: 100, Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 2, Units: "percent"},
	{Name: "%comp", Descr: "Anonymous (computational) memory in percent of size", ASN: 4, Max: 100, Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 2, Units: "percent"},
	memKiB("cached", "Page cache memory", 5),
	memKiB("buffers", "Block device buffer memory", 6),
	memKiB("avail", "Memory available without swapping (estimate)", 7),
}

func memKiB(name, descr string, asn uint32) spmiwire.StatDesc {
	return spmiwire.StatDesc{Name: name, Descr: descr, ASN: asn, Max: 16 << 20, Val: ddswire.SiQuantity, Data: spmiwire.SiLong, Units: "KiB"}
}

type memProvider struct {
	proc   procfs.FS
	src    string
	vmstat string
}

func newMem(r *resolved) spmi.Provider {
	return &memProvider{proc: r.proc, src: filepath.Join(r.ProcRoot, "meminfo"), vmstat: filepath.Join(r.ProcRoot, "vmstat")}
}

func (p *memProvider) Name() string { return "Mem" }

func (p *memProvider) Collect(b *spmi.Builder) error {
	mem, err := b.Context(nil, &memCx)
	if err != nil {
		return err
	}
	realCx, err := b.Context(mem, &memRealCx)
	if err != nil {
		return err
	}
	if err := p.real(b, realCx); err != nil {
		return err
	}
	virtCx, err := b.Context(mem, &memVirtCx)
	if err != nil {
		return err
	}
	return b.Stats(virtCx, memVirtStats, p.virt(b))
}

// virt reads the paging counters; nil (no values) when /proc/vmstat fails.
func (p *memProvider) virt(b *spmi.Builder) []spmiwire.Value {
	vm, err := readVMStat(p.vmstat)
	if err != nil {
		b.Fail(p.vmstat, err)
		return nil
	}
	vals := make([]spmiwire.Value, len(memVirtKeys))
	for i, keys := range memVirtKeys {
		var sum uint64
		found := false
		for _, k := range keys {
			if v, ok := vm[k]; ok {
				sum, found = sum+v, true
			}
		}
		if found {
			vals[i] = spmiwire.Uint(sum)
		}
	}
	return vals
}

func (p *memProvider) real(b *spmi.Builder, realCx *spmi.Node) error {
	var m procfs.Meminfo
	if err := guard(func() (err error) { m, err = p.proc.Meminfo(); return }); err != nil {
		b.Fail(p.src, err)
		return b.Stats(realCx, memRealStats, nil)
	}
	size, free, anon := opt(m.MemTotal), opt(m.MemFree), opt(m.AnonPages)
	pfree, pcomp := spmiwire.NoValue, spmiwire.NoValue
	if size.OK() && free.OK() {
		pfree = pct(free.Float64(), size.Float64())
	}
	if size.OK() && anon.OK() {
		pcomp = pct(anon.Float64(), size.Float64())
	}
	return b.Stats(realCx, memRealStats, []spmiwire.Value{
		size, free, pfree, pcomp, opt(m.Cached), opt(m.Buffers), opt(m.MemAvailable),
	})
}
