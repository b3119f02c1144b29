package hoststats

import (
	"fmt"
	"path/filepath"
	"sync"

	"github.com/prometheus/procfs"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/spmi"
)

var (
	pagSpCx     = spmi.CxDesc{Name: "PagSp", Descr: "Paging space (swap) statistics", ASN: spmi.ASNPagSp, Inst: ddswire.SiCfgInst}
	pagSpInstCx = spmi.CxDesc{Name: "swap", Descr: "Paging space", Inst: ddswire.SiNoInst}
)

// Sizes are KiB, as /proc/swaps gives them.
var pagSpStats = []spmiwire.StatDesc{
	swapKiB("size", "Total active paging space size", 1),
	swapKiB("free", "Total free paging space", 2),
	swapPct("%free", "Free paging space in percent of size", 3),
}

var pagSpInstStats = []spmiwire.StatDesc{
	swapKiB("size", "Size of paging space", 1),
	swapKiB("used", "Used paging space", 2),
	swapKiB("free", "Free paging space", 3),
	swapPct("%free", "Free portion of this paging space (percent)", 4),
	{Name: "priority", Descr: "Priority (higher is used first)", ASN: 5, Min: -32768, Max: 32767, Val: ddswire.SiQuantity, Data: spmiwire.SiLong},
}

func swapKiB(name, descr string, asn uint32) spmiwire.StatDesc {
	return spmiwire.StatDesc{Name: name, Descr: descr, ASN: asn, Max: 16 << 20, Val: ddswire.SiQuantity, Data: spmiwire.SiLong, Units: "KiB"}
}

func swapPct(name, descr string, asn uint32) spmiwire.StatDesc {
	return spmiwire.StatDesc{Name: name, Descr: descr, ASN: asn, Max: 100, Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 2, Units: "percent"}
}

type pagSpProvider struct {
	proc procfs.FS
	src  string

	mu   sync.Mutex
	last []seen
}

func newPagSp(r *resolved) spmi.Provider {
	return &pagSpProvider{proc: r.proc, src: filepath.Join(r.ProcRoot, "swaps")}
}

func (p *pagSpProvider) Name() string { return "PagSp" }

func (p *pagSpProvider) Collect(b *spmi.Builder) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	cx, err := b.Context(nil, &pagSpCx)
	if err != nil {
		return err
	}
	var swaps []*procfs.Swap
	if err := guard(func() (err error) { swaps, err = p.proc.Swaps(); return }); err != nil {
		b.Fail(p.src, err)
		if err := b.Stats(cx, pagSpStats, nil); err != nil {
			return err
		}
		return readdSeen(b, cx, &pagSpInstCx, p.last, pagSpInstStats)
	}
	var size, used uint64
	files := make([]string, len(swaps))
	for i, s := range swaps {
		size += uint64(max(s.Size, 0))
		used += uint64(max(s.Used, 0))
		files[i] = unescapeOctal(s.Filename)
	}
	// The context's own statistics come first, so that allocated instance
	// numbers avoid theirs.
	if err := b.Stats(cx, pagSpStats, []spmiwire.Value{
		spmiwire.Uint(size), spmiwire.Uint(size - min(used, size)), pct(float64(size-min(used, size)), float64(size)),
	}); err != nil {
		return err
	}
	names := uniqueNames(files, swapName)
	p.last = p.last[:0]
	for i, s := range swaps {
		if names[i] == "" {
			b.Fail(p.src, fmt.Errorf("%s: no unique instance name", files[i]))
			continue
		}
		in, err := b.Instance(cx, &pagSpInstCx, names[i], files[i], 0)
		if b.Unnumbered(p.src, err) {
			continue
		}
		if err != nil {
			return err
		}
		free := max(s.Size-s.Used, 0)
		if err := b.Stats(in, pagSpInstStats, []spmiwire.Value{
			spmiwire.Int(int64(s.Size)), spmiwire.Int(int64(s.Used)), spmiwire.Int(int64(free)),
			pct(float64(free), float64(s.Size)), spmiwire.Int(int64(s.Priority)),
		}); err != nil {
			return err
		}
		p.last = append(p.last, seen{name: names[i], descr: files[i]})
	}
	return nil
}
