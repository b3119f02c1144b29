package spmi

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/client/spmiwire"
)

// peerTree has Proc (not instantiable) with its own statistic and the
// instantiable Proc/pid of n processes, whose statistics are added in an
// order that differs by process; and CPU with the aggregate total, not an
// instance, beside its instances.
func peerTree(t testing.TB, n, nstats int) *Snapshot {
	t.Helper()
	b := NewBuilder(testBase, nil, time.Now())
	proc, _ := b.Context(nil, &CxDesc{Name: "Proc", ASN: 10})
	must(t, b.Stat(proc, &spmiwire.StatDesc{Name: "rss", ASN: 1, Val: ddswire.SiQuantity}, spmiwire.Int(-1)))
	pid, _ := b.Context(proc, &CxDesc{Name: "pid", ASN: 100, Inst: ddswire.SiContInst})
	stats := make([]spmiwire.StatDesc, nstats)
	for i := range stats {
		stats[i] = spmiwire.StatDesc{Name: fmt.Sprintf("s%d", i), ASN: uint32(i + 1), Val: ddswire.SiQuantity}
	}
	stats[nstats-1].Name = "rss"
	for p := 1; p <= n; p++ {
		in, err := b.Instance(pid, &CxDesc{}, fmt.Sprint(p*3), "", uint32(p*3))
		must(t, err)
		if p%5 == 0 {
			continue // a process without statistics
		}
		for i := range stats {
			k := i
			if p%2 == 0 {
				k = nstats - 1 - i // added backwards: Finish sorts them by ASN
			}
			must(t, b.Stat(in, &stats[k], spmiwire.Int(int64(p*1000+k))))
		}
	}
	cpu, _ := b.Context(nil, &cpuCx)
	tot, _ := b.Context(cpu, &CxDesc{Name: "total", ASN: 0})
	must(t, b.Stat(tot, &idle, spmiwire.Uint(7)))
	for c := 0; c < 4; c++ {
		in, _ := b.Instance(cpu, &cpuInst, fmt.Sprint("cpu", c), "", uint32(c+1))
		if c != 2 {
			must(t, b.Stat(in, &idle, spmiwire.Uint(uint64(c))))
		} else {
			must(t, b.Stat(in, &spmiwire.StatDesc{Name: "user", ASN: 4, Val: ddswire.SiCounter}, spmiwire.Uint(0)))
		}
	}
	return b.Finish()
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestPeersAreTheSameStatisticOfEachInstance(t *testing.T) {
	s := peerTree(t, 20, 8)
	peers, err := s.Peers("Proc/pid/", "rss")
	must(t, err)
	var got []string
	for _, n := range peers {
		got = append(got, n.Path+"="+n.Value.String())
	}
	var want []string
	for p := 1; p <= 20; p++ {
		if p%5 != 0 {
			want = append(want, fmt.Sprintf("Proc/pid/%d/rss=%d", p*3, p*1000+7))
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("Proc/pid rss peers:\n got %v\nwant %v", got, want)
	}
	// CPU/total is an aggregate beside the instances, not a peer; cpu2
	// has a different statistic at idle's position.
	peers, err = s.Peers("CPU", "idle")
	must(t, err)
	got = got[:0]
	for _, n := range peers {
		got = append(got, n.Path)
	}
	if strings.Join(got, " ") != "CPU/cpu0/idle CPU/cpu1/idle CPU/cpu3/idle" {
		t.Fatalf("CPU idle peers: %v", got)
	}
	if peers, err := s.Peers("CPU", "nosuch"); err != nil || len(peers) != 0 {
		t.Fatalf("unknown statistic: %v %v", peers, err)
	}
	for path, code := range map[string]spmierr.Code{"Proc": spmierr.SiNotInst, "Proc/rss": spmierr.SiBadArgument, "Nope": spmierr.SiNotFound, "Proc/pid/3": spmierr.SiNotInst} {
		if _, err := s.Peers(path, "rss"); spmierr.CodeOf(err) != code {
			t.Errorf("Peers(%q): %v, want %v", path, err, code)
		}
	}
}

func TestPeersAllocateOnlyTheResult(t *testing.T) {
	s := peerTree(t, 200, 8)
	if a := testing.AllocsPerRun(20, func() { s.Peers("Proc/pid", "s3") }); a > 1 {
		t.Fatalf("Peers allocates %v times, want only its result", a)
	}
}

// BenchmarkPeers10k asks for the last statistic of 10,000 processes of
// 100 statistics each: what a hotset over Proc/pid reads per refresh.
func BenchmarkPeers10k(b *testing.B) {
	s := peerTree(b, 10000, 100)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		peers, err := s.Peers("Proc/pid", "rss")
		if err != nil || len(peers) != 8000 {
			b.Fatal(len(peers), err)
		}
	}
}
