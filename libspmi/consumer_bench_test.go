package libspmi

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/consumer"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/control/controltest"
	"github.com/perfagent/subagent/spmi"
)

// bigProvider is a host at the consumer API's targets: 20,000 processes
// of 8 statistics (as Proc/pid/<pid>) and 100,000 supplier statistics
// (100 contexts of 1,000, as DDS/<vendor>/...).
type bigProvider struct{}

var (
	bigProcs = spmi.CxDesc{Name: "Procs", Descr: "Processes", ASN: 61, Inst: ddswire.SiContInst}
	bigProc  = spmi.CxDesc{Descr: "A process"}
	bigSupp  = spmi.CxDesc{Name: "Supplied", Descr: "Supplier statistics", ASN: 62}
)

func (bigProvider) Name() string { return "Big" }
func (bigProvider) Collect(b *spmi.Builder) error {
	procs, err := b.Context(nil, &bigProcs)
	if err != nil {
		return err
	}
	stats := make([]spmiwire.StatDesc, 8)
	for i := range stats {
		stats[i] = spmiwire.StatDesc{Name: fmt.Sprintf("s%d", i), Descr: "A process statistic", ASN: uint32(i + 1), Max: 100, Val: ddswire.SiCounter}
	}
	vals := make([]spmiwire.Value, 8)
	for p := range 20_000 {
		in, err := b.Instance(procs, &bigProc, strconv.Itoa(p), "", uint32(p+1))
		if err != nil {
			return err
		}
		for i := range vals {
			vals[i] = spmiwire.Uint(uint64(p + i))
		}
		if err := b.Stats(in, stats, vals); err != nil {
			return err
		}
	}
	supp, err := b.Context(nil, &bigSupp)
	if err != nil {
		return err
	}
	many := make([]spmiwire.StatDesc, 1000)
	mv := make([]spmiwire.Value, 1000)
	for i := range many {
		many[i] = spmiwire.StatDesc{Name: fmt.Sprintf("v%d", i), Descr: "A supplied level", ASN: uint32(i + 1), Max: 100, Val: ddswire.SiQuantity}
		mv[i] = spmiwire.Uint(uint64(i))
	}
	for c := range 100 {
		cx, err := b.Context(supp, &spmi.CxDesc{Name: fmt.Sprintf("c%d", c), Descr: "A supplier context", ASN: uint32(c + 1)})
		if err != nil {
			return err
		}
		if err := b.Stats(cx, many, mv); err != nil {
			return err
		}
	}
	return nil
}

// serveBig serves bigProvider on a control socket behind lineProxy; the
// tree is built once (min_age 1 h): the figures are the API's, not the
// host's reading.
func serveBig(b *testing.B) (dir string, largest func() int64) {
	dir, served := controlRunDir(b), controlRunDir(b)
	h := spmi.NewHierarchy(spmi.Config{Base: asn1tree.MustParse("1.3.6.1.4.1.32473.1"), MinAge: time.Hour})
	h.Add(bigProvider{})
	h.Refresh()
	controltest.Serve(b, served, h)
	l := lineProxy(b, dir+"/subagent.sock", served+"/subagent.sock")
	return dir, l.Load
}

// procCPU is a process's user and system time so far, and its peak RSS.
func procCPU(b *testing.B, pid int) (cpu time.Duration, hwm int64) {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	f := strings.Fields(string(st[strings.LastIndexByte(string(st), ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	sy, _ := strconv.ParseInt(f[12], 10, 64)
	status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			fmt.Sscan(v, &hwm)
		}
	}
	return time.Duration(ut+sy) * 10 * time.Millisecond, hwm << 10
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkConsumerTraversal walks Top as the guide's traversal does
// (every context, every statistic's description and path) with libSpmi,
// and lists the same tree a page at a time as `subagent peek` does: 20,000
// processes of 8 statistics and 100,000 supplier statistics. It reports
// the consumer's peak RSS and the largest answer on the wire.
func BenchmarkConsumerTraversal(b *testing.B) {
	dir, largest := serveBig(b)
	b.Run("libSpmi", func(b *testing.B) {
		d := startDriver(b, false, dir)
		d.ok("init")
		daemon0 := selfCPU()
		b.ResetTimer()
		for range b.N {
			if got := strings.Join(d.ok("walk"), " "); got != "20102 260000" {
				b.Fatalf("walk: %s contexts and statistics, want 20102 260000", got)
			}
		}
		b.StopTimer()
		_, hwm := procCPU(b, d.cmd.Process.Pid)
		b.ReportMetric(float64(hwm)/(1<<20), "consumer-MB")
		b.ReportMetric(float64(largest())/(1<<20), "largest-answer-MB")
		b.ReportMetric((selfCPU()-daemon0).Seconds()/float64(b.N), "daemon-cpu-s/op")
	})
	b.Run("peek-pages", func(b *testing.B) {
		c, err := consumer.Dial(dir)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		for range b.N {
			n, from := 0, ""
			for {
				page, more, err := c.PeekPage(context.Background(), "", 0, from, 0)
				if err != nil {
					b.Fatal(err)
				}
				n += len(page)
				if !more {
					break
				}
				from = page[len(page)-1].Rel
			}
			if n != 20102+260000 {
				b.Fatalf("peek listed %d entries", n)
			}
		}
	})
}

// BenchmarkConsumerStatSet20000 reads a libSpmi statset of 20,000
// statistics (one in every process's eight) from the daemon's newest
// snapshot (Force FALSE: the tree is built once here); at two reads a
// second the consumer and the daemon spend twice the CPU per read
// reported, besides the daemon's readings of the host.
func BenchmarkConsumerStatSet20000(b *testing.B) {
	dir, largest := serveBig(b)
	d := startDriver(b, false, dir)
	d.ok("init")
	for from := 0; from < 20000; from += 2000 {
		d.ok(fmt.Sprintf("addn Procs/ %d %d s0", from, from+2000))
	}
	d.ok("readsum")
	pid := d.cmd.Process.Pid
	c0, _ := procCPU(b, pid)
	daemon0 := selfCPU()
	b.ResetTimer()
	for range b.N {
		if f := d.ok("readsum newest"); len(f) != 2 || f[0] != "20000" {
			b.Fatalf("readsum: %v", f)
		}
	}
	b.StopTimer()
	c1, hwm := procCPU(b, pid)
	b.ReportMetric((c1-c0).Seconds()/float64(b.N), "consumer-cpu-s/op")
	b.ReportMetric((selfCPU()-daemon0).Seconds()/float64(b.N), "daemon-cpu-s/op")
	b.ReportMetric(float64(hwm)/(1<<20), "consumer-MB")
	b.ReportMetric(float64(largest())/(1<<20), "largest-answer-MB")
}
