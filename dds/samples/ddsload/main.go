// Command ddsload registers many Dynamic Data Suppliers with many
// statistics each, from one process, and keeps their values changing: the
// load behind scripts/bench-dds-walk.sh. Supplier i serves the context
// DDS/Load/s<i> (ASN i) with statistics v1..v<stats> (ASN 1..stats).
//
//	go run ./dds/samples/ddsload -suppliers 100 -stats 1000
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/perfagent/subagent/dds/client"
)

func main() {
	n := flag.Int("suppliers", 100, "suppliers to register")
	m := flag.Int("stats", 1000, "statistics per supplier (at most the daemon's dds.max_stats)")
	dir := flag.String("dir", os.TempDir(), "directory of the shared files")
	every := flag.Duration("every", time.Second, "time between updates")
	flag.Parse()
	if err := run(*n, *m, *dir, *every); err != nil {
		fmt.Fprintln(os.Stderr, "ddsload:", err)
		os.Exit(1)
	}
}

func run(n, m int, dir string, every time.Duration) error {
	sups := make([]*client.Supplier, 0, n)
	defer func() {
		for _, s := range sups {
			s.Exit()
		}
	}()
	vals := make([][]*client.Counter, n)
	for i := range n {
		v := client.NewVendor("Load", "Load generator", 32473)
		cx := v.Context(fmt.Sprintf("s%d", i+1), fmt.Sprintf("Supplier %d", i+1), uint32(i+1))
		for j := range m {
			vals[i] = append(vals[i], cx.Counter(fmt.Sprintf("v%d", j+1), "Load value", uint32(j+1)))
		}
		s, err := client.Start(v, filepath.Join(dir, fmt.Sprintf("ddsload-%d-%d.shm", os.Getpid(), i+1)), nil)
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
