package libspmi

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/control/controltest"
	"github.com/perfagent/subagent/spmi"
)

// manyProvider serves Many/p<i>/v = i % 100 for n instances.
type manyProvider struct{ n int }

var (
	manyCx  = spmi.CxDesc{Name: "Many", Descr: "Peers", ASN: 60, Inst: ddswire.SiCfgInst}
	manyTpl = spmi.CxDesc{Descr: "A peer"}
	manyV   = spmiwire.StatDesc{Name: "v", Descr: "A level", ASN: 1, Max: 100, Val: ddswire.SiQuantity}
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
		if err := b.Stat(in, &manyV, spmiwire.Uint(uint64(i%100))); err != nil {
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
		// Each SpmiPathAddSetStat is a round trip (the guide returns the
		// statistic's description at once), and a round trip may wait
		// for a reading of the 20,000 peers: 1,000 adds a driver line
		// answer well within its 30 s under -race on a loaded machine.
		for from := 0; from < n; from += 1000 {
			d.ok(fmt.Sprintf("addn Many/p %d %d v", from, min(from+1000, n)))
		}
		want := fmt.Sprintf("%d %d", n, n/100*4950)
		for i := range 2 {
			if got := strings.Join(d.ok("readsum"), " "); got != want {
				t.Errorf("read %d: %s values and their sum, want %s", i+1, got, want)
			}
		}
	})
}

// The guide's traversal from Top over thousands of instances completes
// with every answer under 1 MiB: each listing is one level, a page at a
// time (an answer used to be the whole subtree: 10 MB at 3,600
// processes, over the library's 8 MiB).
func TestCTraversalAnswersStaySmall(t *testing.T) {
	const n = 4_000 // a whole-subtree answer would be about 1.6 MB
	dir, served := controlRunDir(t), controlRunDir(t)
	h := spmi.NewHierarchy(spmi.Config{Base: asn1tree.MustParse("1.3.6.1.4.1.32473.1"), MinAge: time.Second})
	h.Add(&manyProvider{n: n})
	controltest.Serve(t, served, h)
	largest := lineProxy(t, filepath.Join(dir, "subagent.sock"), filepath.Join(served, "subagent.sock"))
	d := startDriver(t, false, dir)
	d.ok("init")
	if got, want := strings.Join(d.ok("walk"), " "), fmt.Sprintf("%d %d", n+1, n); got != want {
		t.Errorf("walk: %s contexts and statistics, want %s", got, want)
	}
	if l := largest.Load(); l == 0 || l > 1<<20 {
		t.Errorf("the largest answer was %d bytes, want under 1 MiB", l)
	}
}

// lineProxy forwards connections at sock to target and records the
// longest line the target answered.
func lineProxy(t testing.TB, sock, target string) *atomic.Int64 {
	t.Helper()
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var largest atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("unix", target)
			if err != nil {
				c.Close()
				continue
			}
			go func() { io.Copy(u, c); u.Close() }()
			go func() {
				defer c.Close()
				r := bufio.NewReaderSize(u, 1<<16)
				for {
					line, err := r.ReadBytes('\n')
					if len(line) > 0 {
						if int64(len(line)) > largest.Load() {
							largest.Store(int64(len(line)))
						}
						if _, werr := c.Write(line); werr != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	return &largest
}
