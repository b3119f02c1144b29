package hoststats

import (
	"path/filepath"
	"slices"
	"strconv"
	"sync"

	"github.com/prometheus/procfs"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/spmi"
)

var (
	cpuCx      = spmi.CxDesc{Name: "CPU", Descr: "Processor statistics", ASN: spmi.ASNCPU, Inst: ddswire.SiCfgInst}
	cpuTotalCx = spmi.CxDesc{Name: "total", Descr: "All processors together", ASN: 0, Inst: ddswire.SiNoInst, Aggregate: true}
	cpuInstCx  = spmi.CxDesc{Name: "cpuN", Descr: "Logical processor", Inst: ddswire.SiNoInst}
)

// cpuStats are counters in hundredths of a second, so that their rate per
// second is the percent of one processor (up to 100 x processors for total).
var cpuStats = []spmiwire.StatDesc{
	cpuTime("user", "Time executing in user mode", 1),
	cpuTime("kern", "Time executing in kernel mode", 2),
	cpuTime("wait", "Idle time waiting for I/O", 3),
	cpuTime("idle", "Idle time", 4),
	cpuTime("nice", "Time executing niced processes in user mode", 5),
	cpuTime("irq", "Time servicing hardware interrupts", 6),
	cpuTime("softirq", "Time servicing software interrupts", 7),
	cpuTime("steal", "Time stolen by the hypervisor", 8),
}

func cpuTime(name, descr string, asn uint32) spmiwire.StatDesc {
	return spmiwire.StatDesc{Name: name, Descr: descr, ASN: asn, Max: 100, Val: ddswire.SiCounter, Data: spmiwire.SiLong, Units: "1/100 s"}
}

type cpuProvider struct {
	proc procfs.FS
	src  string

	mu   sync.Mutex
	last []seen
}

func newCPU(r *resolved) spmi.Provider {
	return &cpuProvider{proc: r.proc, src: filepath.Join(r.ProcRoot, "stat")}
}

func (p *cpuProvider) Name() string { return "CPU" }

func (p *cpuProvider) Collect(b *spmi.Builder) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	st, err := readStat(b, p.proc, p.src)
	cpu, cerr := b.Context(nil, &cpuCx)
	if cerr != nil {
		return cerr
	}
	total, cerr := b.Context(cpu, &cpuTotalCx)
	if cerr != nil {
		return cerr
	}
	if err != nil {
		b.Fail(p.src, err)
		if err := b.Stats(total, cpuStats, nil); err != nil {
			return err
		}
		return readdSeen(b, cpu, &cpuInstCx, p.last, cpuStats)
	}
	if err := b.Stats(total, cpuStats, cpuValues(st.CPUTotal)); err != nil {
		return err
	}
	ids := make([]int64, 0, len(st.CPU))
	for id := range st.CPU {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	p.last = p.last[:0]
	for _, id := range ids {
		// cpuN is N+1: the guide's CPU/cpu0 is 1.1, and 0 stays free for total.
		s := seen{name: "cpu" + strconv.FormatInt(id, 10), descr: "Logical processor " + strconv.FormatInt(id, 10), asn: uint32(id) + 1}
		in, err := b.Instance(cpu, &cpuInstCx, s.name, s.descr, s.asn)
		if err != nil {
			return err
		}
		if err := b.Stats(in, cpuStats, cpuValues(st.CPU[id])); err != nil {
			return err
		}
		p.last = append(p.last, s)
	}
	return nil
}

// readStat reads /proc/stat once per refresh for CPU and Proc.
func readStat(b *spmi.Builder, proc procfs.FS, src string) (procfs.Stat, error) {
	return spmi.Shared(b, src, func() (st procfs.Stat, err error) {
		err = guard(func() (err error) { st, err = proc.Stat(); return })
		return st, err
	})
}

func cpuValues(c procfs.CPUStat) []spmiwire.Value {
	return []spmiwire.Value{
		ticks(c.User), ticks(c.System), ticks(c.Iowait), ticks(c.Idle),
		ticks(c.Nice), ticks(c.IRQ), ticks(c.SoftIRQ), ticks(c.Steal),
	}
}
