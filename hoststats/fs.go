package hoststats

import (
	"errors"
	"path/filepath"
	"regexp"
	"slices"
	"sync"

	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/spmi"
)

var (
	// An instance's description is its mount point, as the statistic mount.
	fsCx     = spmi.CxDesc{Name: "FS", Descr: "File system statistics", ASN: spmi.ASNFS, Inst: ddswire.SiCfgInst, DescrStat: "mount"}
	fsInstCx = spmi.CxDesc{Name: "fs", Descr: "Mounted file system", Inst: ddswire.SiNoInst}
)

// Sizes and inode counts can exceed 32 bits: they are Wide.
var fsStats = []spmiwire.StatDesc{
	fsWide("size", "Size of the file system", 1, "KiB"),
	fsWide("free", "Free space", 2, "KiB"),
	fsWide("avail", "Free space available to unprivileged users", 3, "KiB"),
	fsPct("%used", "Used space in percent of used and available space", 4),
	fsWide("inodes", "Number of inodes", 5, "inodes"),
	fsWide("ifree", "Free inodes", 6, "inodes"),
	fsPct("%iused", "Used inodes in percent of all inodes", 7),
	{Name: "mount", Descr: "Mount point", ASN: 8, Val: ddswire.SiQuantity, Data: spmiwire.SiText},
	{Name: "fstype", Descr: "File system type", ASN: 9, Val: ddswire.SiQuantity, Data: spmiwire.SiText},
}

func fsWide(name, descr string, asn uint32, units string) spmiwire.StatDesc {
	return spmiwire.StatDesc{Name: name, Descr: descr, ASN: asn, Max: 1 << 30, Val: ddswire.SiQuantity, Data: spmiwire.SiLong, Units: units, Wide: true}
}

func fsPct(name, descr string, asn uint32) spmiwire.StatDesc {
	return spmiwire.StatDesc{Name: name, Descr: descr, ASN: asn, Max: 100, Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 2, Units: "percent"}
}

type fsProvider struct {
	proc   procfs.FS
	src    string
	ignore *regexp.Regexp
	statfs *statfser

	mu   sync.Mutex
	last []seen
}

func newFS(r *resolved) spmi.Provider {
	return &fsProvider{
		proc: r.proc, src: filepath.Join(r.ProcRoot, "self", "mountinfo"), ignore: r.fsIgnore,
		statfs: newStatfser(r.Statfs, r.StatfsTimeout),
	}
}

func (p *fsProvider) Name() string { return "FS" }

type mount struct{ point, fstype string }

func (p *fsProvider) Collect(b *spmi.Builder) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	cx, err := b.Context(nil, &fsCx)
	if err != nil {
		return err
	}
	var infos []*procfs.MountInfo
	if err := guard(func() (err error) { infos, err = p.proc.GetMounts(); return }); err != nil {
		b.Fail(p.src, err)
		return readdSeen(b, cx, &fsInstCx, p.last, fsStats)
	}
	mounts := p.mounts(infos)
	points := make([]string, len(mounts))
	for i, m := range mounts {
		points[i] = m.point
	}
	names := uniqueNames(points, fsName)
	results := p.statfs.statAll(points)
	p.last = p.last[:0]
	for i, m := range mounts {
		if names[i] == "" {
			b.Fail(p.src, errors.New(m.point+": no unique instance name"))
			continue
		}
		in, err := b.Instance(cx, &fsInstCx, names[i], m.point, 0)
		if b.Unnumbered(p.src, err) {
			continue
		}
		if err != nil {
			return err
		}
		vals := make([]spmiwire.Value, len(fsStats))
		if r := results[i]; r.err != nil {
			b.Fail("statfs "+m.point, r.err)
		} else {
			fsValues(&r.st, vals)
		}
		vals[7], vals[8] = spmiwire.Text(m.point), spmiwire.Text(m.fstype)
		if err := b.Stats(in, fsStats, vals); err != nil {
			return err
		}
		p.last = append(p.last, seen{name: names[i], descr: m.point})
	}
	return nil
}

// mounts keeps the last mount on each mount point (the one statfs sees),
// drops ignored types, and sorts by mount point so that numbers are
// allocated in a stable order.
func (p *fsProvider) mounts(infos []*procfs.MountInfo) []mount {
	at := make(map[string]int, len(infos))
	var all []mount
	for _, mi := range infos {
		m := mount{point: unescapeOctal(mi.MountPoint), fstype: mi.FSType}
		if i, ok := at[m.point]; ok {
			all[i] = m
			continue
		}
		at[m.point] = len(all)
		all = append(all, m)
	}
	out := all[:0]
	for _, m := range all {
		if !p.ignore.MatchString(m.fstype) {
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b mount) int {
		switch {
		case a.point < b.point:
			return -1
		case a.point > b.point:
			return 1
		}
		return 0
	})
	return out
}

// fsValues fills the numeric statistics; %used is df's Use%: used space
// over used plus available space.
func fsValues(st *unix.Statfs_t, v []spmiwire.Value) {
	bs := uint64(st.Frsize)
	if bs == 0 {
		bs = uint64(st.Bsize)
	}
	kib := func(n uint64) spmiwire.Value {
		if bs%1024 == 0 {
			return spmiwire.Uint(n * (bs / 1024))
		}
		return spmiwire.Uint(n * bs / 1024)
	}
	blocks, bfree, bavail := uint64(st.Blocks), uint64(st.Bfree), uint64(st.Bavail)
	files, ffree := uint64(st.Files), uint64(st.Ffree)
	used := blocks - min(bfree, blocks)
	v[0], v[1], v[2] = kib(blocks), kib(bfree), kib(bavail)
	v[3] = pct(float64(used), float64(used+bavail))
	v[4], v[5] = spmiwire.Uint(files), spmiwire.Uint(ffree)
	v[6] = pct(float64(files-min(ffree, files)), float64(files))
}
