package hoststats

import (
	"testing"
	"time"

	"github.com/perfagent/subagent/spmi"
)

// benchCollect measures one refresh as the daemon does it: every provider
// into a new Builder, then Finish, with the numbering kept across.
func benchCollect(b *testing.B, cfg Config) {
	ps := providers(b, cfg)
	num := spmi.NewNumbering("")
	stats := 0
	b.ReportAllocs()
	for b.Loop() {
		bl := spmi.NewBuilder(testBase, num, time.Now())
		for _, p := range ps {
			bl.SetProvider(p.Name())
			if err := p.Collect(bl); err != nil {
				b.Fatal(err)
			}
		}
		stats = bl.Finish().NumStats
	}
	b.ReportMetric(float64(stats), "stats")
}

func BenchmarkCollectHost(b *testing.B) { benchCollect(b, Config{}) }

func BenchmarkCollectFixture(b *testing.B) { benchCollect(b, FixtureConfig(fixtureRoot(b))) }
