package hoststats

import (
	"path/filepath"

	"github.com/prometheus/procfs"

	"github.com/perfagent/subagent/spmi"
)

// Mem/Virt (ASN 2: pagein, pageout, swapin, swapout, faults, steal) is
// reserved: its source, /proc/vmstat, has no parser in procfs v0.23.0.
var (
	memCx     = spmi.CxDesc{Name: "Mem", Descr: "Memory statistics", ASN: 2, Inst: spmi.SiNoInst}
	memRealCx = spmi.CxDesc{Name: "Real", Descr: "Physical memory statistics", ASN: 1, Inst: spmi.SiNoInst}
)

// Sizes are KiB in Gauge32, which covers 4 TiB; larger values are served
// as the Gauge32 maximum (see docs/TREE.md).
var memRealStats = []spmi.StatDesc{
	memKiB("size", "Size of physical memory", 1),
	memKiB("free", "Free physical memory", 2),
	{Name: "%free", Descr: "Free memory in percent of size", ASN: 3, Max: 100, Val: spmi.SiQuantity, Data: spmi.SiFloat, Scale: 2, Units: "percent"},
	{Name: "%comp", Descr: "Anonymous (computational) memory in percent of size", ASN: 4, Max: 100, Val: spmi.SiQuantity, Data: spmi.SiFloat, Scale: 2, Units: "percent"},
	memKiB("cached", "Page cache memory", 5),
	memKiB("buffers", "Block device buffer memory", 6),
	memKiB("avail", "Memory available without swapping (estimate)", 7),
}

func memKiB(name, descr string, asn uint32) spmi.StatDesc {
	return spmi.StatDesc{Name: name, Descr: descr, ASN: asn, Max: 16 << 20, Val: spmi.SiQuantity, Data: spmi.SiLong, Units: "KiB"}
}

type memProvider struct {
	proc procfs.FS
	src  string
}

func newMem(r *resolved) spmi.Provider {
	return &memProvider{proc: r.proc, src: filepath.Join(r.ProcRoot, "meminfo")}
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
	var m procfs.Meminfo
	if err := guard(func() (err error) { m, err = p.proc.Meminfo(); return }); err != nil {
		b.Fail(p.src, err)
		return b.Stats(realCx, memRealStats, nil)
	}
	size, free, anon := opt(m.MemTotal), opt(m.MemFree), opt(m.AnonPages)
	pfree, pcomp := spmi.NoValue, spmi.NoValue
	if size.OK() && free.OK() {
		pfree = pct(free.Float64(), size.Float64())
	}
	if size.OK() && anon.OK() {
		pcomp = pct(anon.Float64(), size.Float64())
	}
	return b.Stats(realCx, memRealStats, []spmi.Value{
		size, free, pfree, pcomp, opt(m.Cached), opt(m.Buffers), opt(m.MemAvailable),
	})
}
