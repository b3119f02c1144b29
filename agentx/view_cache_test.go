package agentx

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perfagent/subagent/asn1tree"
)

type releasedView struct {
	asn1tree.View
	released *int
}

func (v releasedView) Release() { *v.released++ }

// Views of transactions past the TTL are dropped and released, so an
// idle session keeps no snapshot alive; younger ones stay.
func TestViewCacheExpires(t *testing.T) {
	n := 0
	r := newResponder(subtreeScope(testSubtrees...), func() asn1tree.View { return releasedView{released: &n} })
	t0 := time.Now()
	for tid, at := range map[uint32]time.Time{1: t0, 2: t0.Add(viewCacheTTL - time.Second)} {
		var resp packet
		r.answer(&packet{header: header{version: 1, typ: typeGet, sessionID: 1, transactionID: tid}}, &resp, 1, at)
	}
	c := &r.views
	c.expire(t0.Add(viewCacheTTL))
	if n != 1 {
		t.Fatalf("%d views released, want the expired one", n)
	}
	used := 0
	for _, s := range c.slots {
		if s != nil {
			used++
			if s.tid != 2 {
				t.Fatalf("kept transaction %d, want 2", s.tid)
			}
		}
	}
	if used != 1 {
		t.Fatalf("%d slots in use, want 1", used)
	}
}

// countedView counts its releases; the session's reader releases it while
// the test reads the count.
type countedView struct {
	asn1tree.View
	released *atomic.Int32
}

func (v countedView) Release() { v.released.Add(1) }

// A session the master stops querying releases the view of its last
// transaction at the first Ping answered viewCacheTTL after that view was
// loaded, not before.
func TestIdleSessionReleasesViews(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newPipeMaster(t)
		cfg := testConfig(m.addr)
		cfg.PingInterval = 2 * time.Second
		tree := testTree(t)()
		var loaded, released atomic.Int32
		r := startOn(t, m, cfg, func() asn1tree.View {
			loaded.Add(1)
			return countedView{View: tree, released: &released}
		})
		c := m.accept()
		c.handshake(cfg)
		settled(t, "Connected", r.sa.Connected)
		up := time.Now()
		time.Sleep(time.Second) // between two Pings
		if got := c.ask(&packet{header: header{typ: typeGet, flags: flagNetworkByteOrder, transactionID: 1},
			ranges: []searchRange{{start: b("2.0")}}}); vbStrings(got.varbinds) != "2.0=Gauge32:42" || loaded.Load() != 1 {
			t.Fatalf("Get answered %s from %d views", vbStrings(got.varbinds), loaded.Load())
		}
		asked := time.Now()
		for {
			p := c.expect(typePing)
			if at := time.Since(up); at%cfg.PingInterval != 0 {
				t.Fatalf("Ping at %v, not a multiple of %v", at, cfg.PingInterval)
			}
			c.respond(p, NoError)
			synctest.Wait()
			age := time.Since(asked)
			if n := released.Load(); n != 0 && age < viewCacheTTL || n != 1 && age >= viewCacheTTL {
				t.Fatalf("%d views released at a Ping %v after the Get, TTL %v", n, age, viewCacheTTL)
			}
			if age >= viewCacheTTL {
				if age != 5*time.Second {
					t.Errorf("released at a Ping %v after the Get, want 5s (the Ping at 6 s)", age)
				}
				break
			}
		}
	})
}
