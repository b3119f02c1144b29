// Command ddsload registers many Dynamic Data Suppliers with many
// statistics each, from one process, and keeps their values changing: the
// load behind scripts/bench-dds-walk.sh. Supplier i serves the context
// DDS/<vendor>/s<i> (ASN i; vendor Load, enterprise number 32473 unless
// -vendor and -asn say otherwise) with statistics v1..v<stats> (ASN
// 1..stats); more statistics than -per-context go into subcontexts c1,
// c2, ... of it, so a supplier can reach the daemon's dds.max_stats_total
// while each context stays within dds.max_stats.
//
//	go run ./samples/ddsload -suppliers 100 -stats 1000
//	go run ./samples/ddsload -suppliers 16 -stats 62500 -per-context 1000
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/perfagent/subagent/client/ddsclient"
)

func main() {
	n := flag.Int("suppliers", 100, "suppliers to register")
	m := flag.Int("stats", 1000, "statistics per supplier (at most the daemon's dds.max_stats)")
	dir := flag.String("dir", os.TempDir(), "directory of the shared files")
	every := flag.Duration("every", time.Second, "time between updates")
	per := flag.Int("per-context", 1000, "statistics per context (at most the daemon's dds.max_stats)")
	vendor := flag.String("vendor", "Load", "vendor name: the suppliers serve DDS/<vendor>/s<i>")
	asn := flag.Uint("asn", 32473, "the vendor's enterprise number")
	flag.Parse()
	if err := run(*vendor, uint32(*asn), *n, *m, max(*per, 1), *dir, *every); err != nil {
		fmt.Fprintln(os.Stderr, "ddsload:", err)
		os.Exit(1)
	}
}

func run(vendor string, asn uint32, n, m, per int, dir string, every time.Duration) error {
	sups := make([]*ddsclient.Supplier, 0, n)
	defer func() {
		for _, s := range sups {
			s.Exit()
		}
	}()
	vals := make([][]*ddsclient.Counter, n)
	for i := range n {
		v := ddsclient.NewVendor(vendor, "Load generator", asn)
		cx := v.Context(fmt.Sprintf("s%d", i+1), fmt.Sprintf("Supplier %d", i+1), uint32(i+1))
		at := cx
		for j := range m {
			if m > per && j%per == 0 {
				k := j/per + 1
				at = cx.Context(fmt.Sprintf("c%d", k), fmt.Sprintf("Part %d", k), uint32(k))
			}
			vals[i] = append(vals[i], at.Counter(fmt.Sprintf("v%d", j+1), "Load value", uint32(j+1)))
		}
		s, err := ddsclient.Start(v, filepath.Join(dir, fmt.Sprintf("ddsload-%d-%d.shm", os.Getpid(), i+1)), nil)
		if err != nil {
			return fmt.Errorf("supplier %d: %w", i+1, err)
		}
		sups = append(sups, s)
	}
	fmt.Printf("ddsload: %d suppliers x %d statistics registered\n", n, m)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return nil
		case <-t.C:
		}
		for i, s := range sups {
			s.Update(func() {
				for _, c := range vals[i] {
					c.Inc()
				}
			})
		}
	}
}
