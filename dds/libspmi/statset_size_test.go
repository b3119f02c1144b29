package libspmi

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/control/controltest"
	"github.com/perfagent/subagent/spmi"
)

// manyProvider serves Many/p<i>/v = i % 100 for n instances.
type manyProvider struct{ n int }

var (
	manyCx  = spmi.CxDesc{Name: "Many", Descr: "Peers", ASN: 60, Inst: spmi.SiCfgInst}
	manyTpl = spmi.CxDesc{Descr: "A peer"}
	manyV   = spmi.StatDesc{Name: "v", Descr: "A level", ASN: 1, Max: 100, Val: spmi.SiQuantity}
)

func (p *manyProvider) Name() string { return "Many" }
func (p *manyProvider) Collect(b *spmi.Builder) error {
	cx, err := b.Context(nil, &manyCx)
	if err != nil {
		return err
	}
	for i := range p.n {
		in, err := b.Instance(cx, &manyTpl, fmt.Sprintf("p%d", i), "", uint32(i+1))
		if err != nil {
			return err
		}
		if err := b.Stat(in, &manyV, spmi.Uint(uint64(i%100))); err != nil {
			return err
		}
	}
	return nil
}

// A statset of 20,000 statistics (the guide has no limit; a monitor of
// 5,000 processes × 3 statistics needs 15,000) reads every value from one
// snapshot, twice, through both libraries.
func TestCStatSetOfTwentyThousand(t *testing.T) {
	const n = 20_000
	bothLibs(t, func(t *testing.T, static bool) {
		dir := controlRunDir(t)
		// min_age as shipped: each add's check reads the 20,000 peers
		// at most once a second.
		h := spmi.NewHierarchy(spmi.Config{Base: asn1tree.MustParse("1.3.6.1.4.1.32473.1"), MinAge: time.Second})
		h.Add(&manyProvider{n: n})
		controltest.Serve(t, dir, h)
		d := startDriver(t, static, dir)
		d.ok("init")
		d.ok(fmt.Sprintf("addn Many/p %d v", n))
		want := fmt.Sprintf("%d %d", n, n/100*4950)
		for i := range 2 {
			if got := strings.Join(d.ok("readsum"), " "); got != want {
				t.Errorf("read %d: %s values and their sum, want %s", i+1, got, want)
			}
		}
	})
}
