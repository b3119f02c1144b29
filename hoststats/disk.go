package hoststats

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/prometheus/procfs/blockdevice"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/spmi"
)

var (
	diskCx     = spmi.CxDesc{Name: "Disk", Descr: "Disk (whole block device) statistics", ASN: spmi.ASNDisk, Inst: ddswire.SiCfgInst}
	diskInstCx = spmi.CxDesc{Name: "disk", Descr: "Block device", Inst: ddswire.SiNoInst}
)

var diskStats = []spmiwire.StatDesc{
	diskCount("reads", "Read transfers completed", 1, 10000, "transfers"),
	diskCount("writes", "Write transfers completed", 2, 10000, "transfers"),
	diskCount("xfer", "Transfers completed (reads and writes)", 3, 10000, "transfers"),
	diskCount("rblk", "512-byte sectors read", 4, 1000000, "sectors"),
	diskCount("wblk", "512-byte sectors written", 5, 1000000, "sectors"),
	// io_ticks is in ms; in hundredths of a second its rate is % busy.
	diskCount("busy", "Time the device was busy (rate: percent busy)", 6, 100, "1/100 s"),
	{Name: "qlen", Descr: "I/O requests in progress", ASN: 7, Max: 64, Val: ddswire.SiQuantity, Data: spmiwire.SiLong, Units: "requests"},
	diskCount("rtime", "Time spent by all reads", 8, 1000, "milliseconds"),
	diskCount("wtime", "Time spent by all writes", 9, 1000, "milliseconds"),
}

func diskCount(name, descr string, asn uint32, hi int64, units string) spmiwire.StatDesc {
	return spmiwire.StatDesc{Name: name, Descr: descr, ASN: asn, Max: hi, Val: ddswire.SiCounter, Data: spmiwire.SiLong, Units: units}
}

type diskProvider struct {
	block   blockdevice.FS
	ignore  *regexp.Regexp
	src     string
	sysSrc  string
	mu      sync.Mutex
	last    []seen
	wholeOK map[string]bool // whole devices at the last readable /sys/block
}

func newDisk(r *resolved) spmi.Provider {
	return &diskProvider{
		block: r.block, ignore: r.diskIgnore,
		src: filepath.Join(r.ProcRoot, "diskstats"), sysSrc: filepath.Join(r.SysRoot, "block"),
	}
}

func (p *diskProvider) Name() string { return "Disk" }

func (p *diskProvider) Collect(b *spmi.Builder) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	cx, err := b.Context(nil, &diskCx)
	if err != nil {
		return err
	}
	var stats []blockdevice.Diskstats
	if err := guard(func() (err error) { stats, err = p.block.ProcDiskstats(); return }); err != nil {
		b.Fail(p.src, err)
		return readdSeen(b, cx, &diskInstCx, p.last, diskStats)
	}
	whole := p.wholeDevices(b)
	p.last = p.last[:0]
	for i := range stats {
		d := &stats[i]
		// diskstats writes "/" in names where sysfs writes "!" (cciss/c0d0).
		name := strings.ReplaceAll(d.DeviceName, "/", "!")
		if p.ignore.MatchString(name) || (whole != nil && !whole[name]) {
			continue
		}
		s := seen{name: name, descr: fmt.Sprintf("Block device %s (%d:%d)", name, d.MajorNumber, d.MinorNumber)}
		in, err := b.Instance(cx, &diskInstCx, s.name, s.descr, 0)
		if b.Unnumbered(p.src, err) {
			continue
		}
		if err != nil {
			return err
		}
		if err := b.Stats(in, diskStats, []spmiwire.Value{
			spmiwire.Uint(d.ReadIOs), spmiwire.Uint(d.WriteIOs), spmiwire.Uint(d.ReadIOs + d.WriteIOs),
			spmiwire.Uint(d.ReadSectors), spmiwire.Uint(d.WriteSectors), spmiwire.Uint(d.IOsTotalTicks / 10),
			spmiwire.Uint(d.IOsInProgress), spmiwire.Uint(d.ReadTicks), spmiwire.Uint(d.WriteTicks),
		}); err != nil {
			return err
		}
		p.last = append(p.last, s)
	}
	return nil
}

// wholeDevices is the set of whole devices (partitions are not listed in
// /sys/block). When /sys/block cannot be read the last set read is used;
// nil (no filter) when there never was one.
func (p *diskProvider) wholeDevices(b *spmi.Builder) map[string]bool {
	names, err := p.block.SysBlockDevices()
	if err != nil {
		b.Fail(p.sysSrc, err)
		return p.wholeOK
	}
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	p.wholeOK = m
	return m
}
