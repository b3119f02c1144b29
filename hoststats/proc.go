package hoststats

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/prometheus/procfs"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/spmi"
)

var (
	procCx = spmi.CxDesc{Name: "Proc", Descr: "Process statistics", ASN: spmi.ASNProc, Inst: ddswire.SiNoInst}
	// An instance is named by its PID and described by its command, as
	// the statistic name.
	procPidCx  = spmi.CxDesc{Name: "pid", Descr: "Processes by process ID", ASN: 100, Inst: ddswire.SiContInst, NameIsNumber: true, DescrStat: "name"}
	procInstCx = spmi.CxDesc{Name: "process", Descr: "Process", Inst: ddswire.SiNoInst}
)

var procStats = []spmiwire.StatDesc{
	{Name: "runque", Descr: "Processes running or ready to run", ASN: 1, Max: 10, Val: ddswire.SiQuantity, Data: spmiwire.SiLong, Units: "processes"},
	{Name: "swpque", Descr: "Processes blocked waiting for I/O", ASN: 2, Max: 10, Val: ddswire.SiQuantity, Data: spmiwire.SiLong, Units: "processes"},
	{Name: "pswitch", Descr: "Context switches", ASN: 3, Max: 10000, Val: ddswire.SiCounter, Data: spmiwire.SiLong, Units: "switches"},
	{Name: "forks", Descr: "Processes and threads created", ASN: 4, Max: 100, Val: ddswire.SiCounter, Data: spmiwire.SiLong, Units: "processes"},
	{Name: "nprocs", Descr: "Number of processes", ASN: 5, Max: 1000, Val: ddswire.SiQuantity, Data: spmiwire.SiLong, Units: "processes"},
	loadAvg("loadavg1", "Load average over 1 minute", 6),
	loadAvg("loadavg5", "Load average over 5 minutes", 7),
	loadAvg("loadavg15", "Load average over 15 minutes", 8),
}

func loadAvg(name, descr string, asn uint32) spmiwire.StatDesc {
	return spmiwire.StatDesc{Name: name, Descr: descr, ASN: asn, Max: 10, Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 2, Units: "processes"}
}

var procInstStats = []spmiwire.StatDesc{
	{Name: "name", Descr: "Command name", ASN: 1, Val: ddswire.SiQuantity, Data: spmiwire.SiText},
	{Name: "state", Descr: "State (R running, S sleeping, D disk wait, Z zombie, ...)", ASN: 2, Val: ddswire.SiQuantity, Data: spmiwire.SiText},
	{Name: "usercpu", Descr: "Time executing in user mode", ASN: 3, Max: 100, Val: ddswire.SiCounter, Data: spmiwire.SiLong, Units: "1/100 s"},
	{Name: "syscpu", Descr: "Time executing in kernel mode", ASN: 4, Max: 100, Val: ddswire.SiCounter, Data: spmiwire.SiLong, Units: "1/100 s"},
	{Name: "rss", Descr: "Resident set size", ASN: 5, Max: 1 << 20, Val: ddswire.SiQuantity, Data: spmiwire.SiLong, Units: "KiB"},
	{Name: "threads", Descr: "Number of threads", ASN: 6, Max: 100, Val: ddswire.SiQuantity, Data: spmiwire.SiLong, Units: "threads"},
	{Name: "ppid", Descr: "Process ID of the parent", ASN: 7, Max: 1 << 22, Val: ddswire.SiQuantity, Data: spmiwire.SiLong},
	{Name: "vsize", Descr: "Virtual memory size", ASN: 8, Max: 1 << 22, Val: ddswire.SiQuantity, Data: spmiwire.SiLong, Units: "KiB"},
}

type procProvider struct {
	proc     procfs.FS
	root     string
	pageSize uint64

	mu   sync.Mutex
	last []seen
	buf  []procfs.ProcStat // reused between refreshes
	vals []spmiwire.Value
}

func newProc(r *resolved) spmi.Provider {
	return &procProvider{proc: r.proc, root: r.ProcRoot, pageSize: uint64(r.pageSize)}
}

func (p *procProvider) Name() string { return "Proc" }

func (p *procProvider) Collect(b *spmi.Builder) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	cx, err := b.Context(nil, &procCx)
	if err != nil {
		return err
	}
	vals := make([]spmiwire.Value, len(procStats))
	if st, err := readStat(b, p.proc, filepath.Join(p.root, "stat")); err != nil {
		b.Fail(filepath.Join(p.root, "stat"), err)
	} else {
		vals[0], vals[1] = spmiwire.Uint(st.ProcessesRunning), spmiwire.Uint(st.ProcessesBlocked)
		vals[2], vals[3] = spmiwire.Uint(st.ContextSwitches), spmiwire.Uint(st.ProcessCreated)
	}
	var la *procfs.LoadAvg
	if err := guard(func() (err error) { la, err = p.proc.LoadAvg(); return }); err != nil {
		b.Fail(filepath.Join(p.root, "loadavg"), err)
	} else {
		vals[5], vals[6], vals[7] = spmiwire.Float(la.Load1), spmiwire.Float(la.Load5), spmiwire.Float(la.Load15)
	}
	procs, lerr := p.proc.AllProcs()
	if lerr == nil {
		p.readAll(b, procs)
		vals[4] = spmiwire.Uint(uint64(len(p.buf)))
	}
	if err := b.Stats(cx, procStats, vals); err != nil {
		return err
	}
	pid, err := b.Context(cx, &procPidCx)
	if err != nil {
		return err
	}
	if lerr != nil {
		b.Fail(p.root, lerr)
		return readdSeen(b, pid, &procInstCx, p.last, procInstStats)
	}
	return p.addAll(b, pid)
}

// readAll reads /proc/<pid>/stat of every process into p.buf; processes
// that exit meanwhile are left out.
func (p *procProvider) readAll(b *spmi.Builder, procs procfs.Procs) {
	p.buf = p.buf[:0]
	for _, pr := range procs {
		var s procfs.ProcStat
		err := guard(func() (err error) { s, err = pr.Stat(); return })
		if err != nil {
			if !vanished(err) {
				b.Fail(filepath.Join(p.root, "[pid]", "stat"), procStatErr(err))
			}
			continue
		}
		p.buf = append(p.buf, s)
	}
}

// procStatErr is err less what names one process (its PID, its path, its
// content): failures are logged once per change of message, and one kind
// of failure must not log again for every process it hits.
func procStatErr(err error) error {
	var pe *fs.PathError
	switch {
	case errors.As(err, &pe):
		return fmt.Errorf("some processes: %s: %w", pe.Op, pe.Err)
	case errors.Is(err, procfs.ErrFileParse):
		return fmt.Errorf("some processes: %w", procfs.ErrFileParse)
	}
	return errors.New("some processes: malformed content")
}

func (p *procProvider) addAll(b *spmi.Builder, pid *spmi.Node) error {
	p.last = p.last[:0]
	if cap(p.vals) < len(procInstStats) {
		p.vals = make([]spmiwire.Value, len(procInstStats))
	}
	v := p.vals[:len(procInstStats)]
	for i := range p.buf {
		s := &p.buf[i]
		if s.PID <= 0 {
			continue
		}
		in, err := b.Instance(pid, &procInstCx, strconv.Itoa(s.PID), s.Comm, uint32(s.PID))
		if err != nil {
			return err
		}
		v[0], v[1] = spmiwire.Text(s.Comm), spmiwire.Text(s.State)
		v[2], v[3] = spmiwire.Uint(uint64(s.UTime)), spmiwire.Uint(uint64(s.STime))
		v[4] = spmiwire.Uint(uint64(max(s.RSS, 0)) * p.pageSize / 1024)
		v[5], v[6] = spmiwire.Uint(uint64(max(s.NumThreads, 0))), spmiwire.Uint(uint64(max(s.PPID, 0)))
		v[7] = spmiwire.Uint(uint64(s.VSize) / 1024)
		if err := b.Stats(in, procInstStats, v); err != nil {
			return err
		}
		p.last = append(p.last, seen{name: in.Name, descr: in.Descr, asn: in.ASN})
	}
	return nil
}
