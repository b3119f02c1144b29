package control_test

import (
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/consumer"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/client/spmiwire"

	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/control"
	"github.com/perfagent/subagent/control/controltest"
	"github.com/perfagent/subagent/spmi"
)

// peers is a provider of n instances Many/p<i> with a quantity v; a
// refresh waits while hold is armed (a slow source), after saying so on
// held.
type peers struct {
	n    atomic.Int64
	mu   sync.Mutex
	hold chan struct{}
	held chan struct{}
}

var (
	manyCx  = spmi.CxDesc{Name: "Many", Descr: "Peers", ASN: 60, Inst: ddswire.SiCfgInst}
	manyTpl = spmi.CxDesc{Descr: "A peer"}
	manyV   = spmiwire.StatDesc{Name: "v", Descr: "A level", ASN: 1, Max: 100, Val: ddswire.SiQuantity}
)

func (p *peers) Name() string { return "Many" }
func (p *peers) Collect(b *spmi.Builder) error {
	p.mu.Lock()
	hold, held := p.hold, p.held
	p.mu.Unlock()
	if hold != nil {
		held <- struct{}{}
		<-hold
	}
	cx, _ := b.Context(nil, &manyCx)
	for i := range int(p.n.Load()) {
		in, err := b.Instance(cx, &manyTpl, fmt.Sprintf("p%d", i), "", uint32(i+1))
		if err != nil {
			return err
		}
		b.Stat(in, &manyV, spmiwire.Uint(uint64(i%100)))
	}
	return nil
}

// budgeted serves a hierarchy of n peers to the test as a user that is
// neither owner nor admin (unless owners), with budget b; it returns the
// run directory, the provider and the log.
func budgeted(t *testing.T, n int, b control.Budget, owners bool) (string, *peers, *testutil.Buffer) {
	t.Helper()
	dir := runDir(t)
	p, lb := &peers{}, &testutil.Buffer{}
	p.n.Store(int64(n))
	srv := &control.Server{H: controltest.Hierarchy(0, p), Log: slog.New(slog.NewTextHandler(lb, nil)), Access: control.Access{Budget: b}}
	if !owners {
		control.WithoutOwners(srv)
	}
	controltest.ServeServer(t, dir, srv)
	return dir, p, lb
}

// refusedFor checks that err is the budget refusal naming setting.
func refusedFor(t *testing.T, what string, err error, setting string) {
	t.Helper()
	if spmierr.CodeOf(err) != spmierr.SiCallocFailed || !strings.Contains(err.Error(), "("+setting+")") {
		t.Errorf("%s: %v, want SiCallocFailed naming %s", what, err, setting)
	}
}

// A user's connections share one budget of hotsets and peer sets; what a
// connection held comes back when it frees it or closes.
func TestBudgetIsPerUserAcrossConnections(t *testing.T) {
	dir, _, lb := budgeted(t, 10, control.Budget{Hotsets: 3, PeerSets: 4, Bytes: 1 << 30}, false)
	ctx := t.Context()
	a, b := connect(t, consumer.Dial, dir), connect(t, consumer.Dial, dir)
	ha1, _ := a.HotsetCreate(ctx)
	ha2, _ := a.HotsetCreate(ctx)
	hb, err := b.HotsetCreate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.HotsetCreate(ctx)
	refusedFor(t, "fourth hotset of the user", err, "control.max_hotsets_per_uid")

	def := spmiwire.HotDef{Stat: "Many/*/v", Feed: "always", MaxResp: 1}
	for _, add := range []struct {
		c  *consumer.Client
		id int
	}{{a, ha1}, {a, ha1}, {a, ha2}, {b, hb}} {
		if _, err := add.c.HotsetAdd(ctx, add.id, def); err != nil {
			t.Fatal(err)
		}
	}
	_, err = b.HotsetAdd(ctx, hb, def)
	refusedFor(t, "fifth peer set of the user", err, "control.max_hotset_peer_sets_per_uid")
	if r, err := b.HotsetGet(ctx, hb, time.Time{}); err != nil || len(r.PeerSets) != 1 {
		t.Errorf("read of the hotset whose add was refused: %+v %v, want its one peer set", r, err)
	}

	// Deleting a peer set makes room for one.
	if err := a.HotsetDel(ctx, ha2, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := b.HotsetAdd(ctx, hb, def); err != nil {
		t.Errorf("add after a delete: %v", err)
	}
	// Closing a makes room for its hotsets and peer sets.
	a.Close()
	testutil.Eventually(t, "a closed connection's hotsets to be given back", 5*time.Second, func() bool {
		id, err := b.HotsetCreate(ctx)
		if err == nil {
			b.HotsetFree(ctx, id)
		}
		return err == nil
	})
	for range 2 {
		if _, err := b.HotsetCreate(ctx); err != nil {
			t.Errorf("create after the other connection closed: %v", err)
		}
	}
	if n := strings.Count(lb.String(), "control: over a per-user budget"); n != 2 {
		t.Errorf("2 kinds of refusal logged %d times:\n%s", n, lb)
	}
}

// The bytes a user's hotsets may take bound peer sets over many peers;
// maxresp keeps one small.
func TestBudgetBoundsBytes(t *testing.T) {
	dir, _, _ := budgeted(t, 2000, control.Budget{Bytes: 1 << 20}, false)
	ctx := t.Context()
	c := connect(t, consumer.Dial, dir)
	id, _ := c.HotsetCreate(ctx)
	all := spmiwire.HotDef{Stat: "Many/*/v", Feed: "always"}
	if _, err := c.HotsetAdd(ctx, id, all); err != nil {
		t.Fatalf("one peer set over 2000 peers: %v", err)
	}
	var err error
	for i := 0; err == nil && i < 10; i++ {
		_, err = c.HotsetAdd(ctx, id, all)
	}
	refusedFor(t, "peer sets over 2000 peers each, for 1 MiB", err, "control.max_hotset_bytes_per_uid")
	if _, err := c.HotsetAdd(ctx, id, spmiwire.HotDef{Stat: "Many/*/v", Feed: "always", MaxResp: 5}); err != nil {
		t.Errorf("a top 5 after the budget refused a full feed: %v", err)
	}
	r, err := c.HotsetGet(ctx, id, time.Time{})
	if err != nil || len(r.PeerSets[0].Groups[0].Items) != 2000 || len(r.PeerSets[len(r.PeerSets)-1].Groups[0].Items) != 5 {
		t.Fatalf("read within the budget: %v", err)
	}
}

// Peers that appear after a peer set was added can take its hotset over
// the budget: its read is refused and what it held is dropped, so that
// the user's other hotsets still have room.
func TestTreeGrowingOverTheBudget(t *testing.T) {
	dir, p, _ := budgeted(t, 100, control.Budget{Bytes: 1 << 20}, false)
	ctx := t.Context()
	c := connect(t, consumer.Dial, dir)
	id, _ := c.HotsetCreate(ctx)
	if _, err := c.HotsetAdd(ctx, id, spmiwire.HotDef{Stat: "Many/*/v", Feed: "always"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.HotsetGet(ctx, id, time.Time{}); err != nil {
		t.Fatal(err)
	}
	p.n.Store(20000)
	_, err := c.HotsetGet(ctx, id, time.Time{})
	refusedFor(t, "read after the tree grew 200 times", err, "control.max_hotset_bytes_per_uid")
	p.n.Store(100)
	other, _ := c.HotsetCreate(ctx)
	if _, err := c.HotsetAdd(ctx, other, spmiwire.HotDef{Stat: "Many/*/v", Feed: "always"}); err != nil {
		t.Errorf("add once the refused read dropped its results: %v", err)
	}
	if r, err := c.HotsetGet(ctx, id, time.Time{}); err != nil || len(r.PeerSets[0].Groups[0].Items) != 100 {
		t.Errorf("read once the tree shrank back: %v", err)
	}
}

// Root and the daemon's user are bounded per connection only.
func TestOwnersAreNotBudgeted(t *testing.T) {
	dir, _, _ := budgeted(t, 2000, control.Budget{Hotsets: 1, PeerSets: 1, Bytes: 1 << 16}, true)
	ctx := t.Context()
	a, b := connect(t, consumer.Dial, dir), connect(t, consumer.Dial, dir)
	for _, c := range []*consumer.Client{a, b} {
		id, err := c.HotsetCreate(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if _, err := c.HotsetAdd(ctx, id, spmiwire.HotDef{Stat: "Many/*/v", Feed: "always"}); err != nil {
				t.Fatalf("owner's add: %v", err)
			}
		}
	}
}

// A refused change with a long path, repeated from several connections,
// is one short line in the log.
func TestChangeRefusalsAreLoggedOnceAndShort(t *testing.T) {
	dir, _, lb := budgeted(t, 1, control.Budget{}, false)
	ctx := t.Context()
	path := "Ref/" + strings.Repeat("x", 60<<10)
	for range 3 {
		c := connect(t, consumer.Dial, dir)
		for range 100 {
			if err := c.Create(ctx, path); err == nil || !strings.Contains(err.Error(), "may not create") {
				t.Fatalf("reader's create: %v", err)
			}
		}
	}
	out := lb.String()
	if n := strings.Count(out, "control: change refused"); n != 1 || len(out) > 1024 || !strings.Contains(out, "more bytes)") {
		t.Errorf("300 refused creates of a 60 KiB path: %d lines, %d bytes:\n%.2000s", n, len(out), out)
	}
}

// A user has one request answered at a time, whatever its connections:
// while one waits for a slow refresh, its others wait; the owners' and
// other users' requests do not.
func TestOneRequestAtATimePerUser(t *testing.T) {
	for _, owner := range []bool{false, true} {
		dir, p, _ := budgeted(t, 1, control.Budget{}, owner)
		ctx := t.Context()
		a, b := connect(t, consumer.Dial, dir), connect(t, consumer.Dial, dir)
		if _, err := a.Status(ctx); err != nil {
			t.Fatal(err)
		}
		hold, held := make(chan struct{}), make(chan struct{})
		p.mu.Lock()
		p.hold, p.held = hold, held
		p.mu.Unlock()
		var once sync.Once
		release := func() {
			once.Do(func() {
				p.mu.Lock()
				p.hold = nil
				p.mu.Unlock()
				close(hold)
			})
		}
		t.Cleanup(release) // before the server stops, should the test fail
		slow := make(chan error)
		go func() {
			_, err := a.Read(ctx, []string{"Many/p0/v"}) // waits for the refresh
			slow <- err
		}()
		<-held
		quick := make(chan error)
		go func() { quick <- b.HotsetFree(ctx, 1) }() // needs no snapshot
		// A reader's second request must not be answered while the
		// first runs (it is, at once, without turns); an owner's must be.
		wait := 200 * time.Millisecond
		if owner {
			wait = 10 * time.Second
		}
		select {
		case err := <-quick:
			if !owner {
				t.Fatalf("a reader's second request was answered while its first ran: %v", err)
			}
		case <-slow:
			t.Fatal("the slow read ended while its refresh was held")
		case <-time.After(wait):
			if owner {
				t.Errorf("an owner's request waited %v for another of its requests", wait)
			}
		}
		release()
		if err := <-slow; err != nil {
			t.Fatal(err)
		}
		if !owner {
			if err := <-quick; spmierr.CodeOf(err) != spmierr.SiInvalidCx {
				t.Errorf("the waiting request: %v", err)
			}
		}
	}
}
