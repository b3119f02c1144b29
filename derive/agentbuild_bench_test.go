package derive

import (
	"testing"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/spmi"
)

// BenchmarkAgentExprBuild is the Agent context's share of a refresh that
// requests wait for with 1,000 derived statistics and 1,000 alarms:
// Agent/expr grafted (docs/PERFORMANCE.md; built in place before, 5.7 ms
// and 16,000 allocations).
func BenchmarkAgentExprBuild(b *testing.B) {
	ds, as := benchDefs(b, 1000, 0)
	e, err := New(ds, as, nil)
	if err != nil {
		b.Fatal(err)
	}
	e.Evaluate(benchHost(b, 10, time.Unix(1_700_000_000, 0), 1))
	num := spmi.NewNumbering("")
	b.ReportAllocs()
	for b.Loop() {
		bl := spmi.NewBuilder(asn1tree.OID{1, 3, 6, 1, 4, 1, 32473, 1}, num, time.Now())
		ag, err := bl.Context(nil, &spmi.CxDesc{Name: "Agent", Descr: "Agent", ASN: 12})
		if err != nil {
			b.Fatal(err)
		}
		if err := e.AgentStats(bl, ag); err != nil {
			b.Fatal(err)
		}
		bl.Finish()
	}
}
