package hoststats

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/procfs"

	"github.com/perfagent/subagent/spmi"
)

// procRoot5000 makes a /proc with 5,000 processes (the fixture's java
// process, renumbered) besides the fixture's stat and loadavg.
func procRoot5000(b *testing.B) string {
	b.Helper()
	fix := filepath.Join(fixtureRoot(b), "testdata", "proc")
	root := b.TempDir()
	for _, f := range []string{"stat", "loadavg"} {
		data, err := os.ReadFile(filepath.Join(fix, f))
		if err != nil {
			b.Fatal(err)
		}
		os.WriteFile(filepath.Join(root, f), data, 0o644)
	}
	if err := AddFixtureProcs(fixtureRoot(b), root, 5000); err != nil {
		b.Fatal(err)
	}
	return root
}

// BenchmarkProc5000 is one refresh of Proc with 5,000 processes: the
// daemon's provider (reading every /proc/<pid>/stat and adding 8
// statistics each to the tree, indexed as scalars and as the procPidTable)
// beside what node_exporter's processes collector reads per scrape on the
// same tree (procfs AllProcs and each process's Stat, nothing built).
func BenchmarkProc5000(b *testing.B) {
	root := procRoot5000(b)
	b.Run("subagent", func(b *testing.B) {
		off := map[string]bool{}
		for _, n := range Names() {
			off[n] = n != "Proc"
		}
		ps := providers(b, Config{ProcRoot: root, SysRoot: filepath.Join(fixtureRoot(b), "testdata", "sys"), Disabled: off})
		num := spmi.NewNumbering("")
		b.ReportAllocs()
		n := 0
		for b.Loop() {
			bl := spmi.NewBuilder(testBase, num, time.Now())
			for _, p := range ps {
				if err := p.Collect(bl); err != nil {
					b.Fatal(err)
				}
			}
			n = bl.Finish().NumStats
		}
		if n < 40000 {
			b.Fatalf("only %d statistics", n)
		}
	})
	b.Run("procfs-reads-of-node_exporter", func(b *testing.B) {
		fs, err := procfs.NewFS(root)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			procs, err := fs.AllProcs()
			if err != nil {
				b.Fatal(err)
			}
			threads := 0
			for _, p := range procs {
				s, err := p.Stat()
				if err != nil {
					continue
				}
				threads += s.NumThreads
			}
			if len(procs) != 5000 || threads == 0 {
				b.Fatalf("%d processes", len(procs))
			}
		}
	})
}
