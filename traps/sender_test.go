package traps

import (
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/testutil"
)

// fakeLink stands for a destination inside a synctest bubble: a send
// takes `takes` on the bubble's clock, then fails with fail (nil: sent).
type fakeLink struct {
	d     *fakeDest
	takes time.Duration
	fail  error
	// Traps waiting for an ICMP error: waitFor after each send; lostNext
	// is what the next look for errors finds.
	waitFor  time.Duration
	lastSend time.Time
	lostNext []lost
}

// fakeDest counts what reached one destination's links.
type fakeDest struct {
	mu            sync.Mutex
	dials, closes int
	sends         []time.Time // when each send ended
}

func (l *fakeLink) send(Notification) error {
	time.Sleep(l.takes)
	l.d.mu.Lock()
	defer l.d.mu.Unlock()
	l.d.sends = append(l.d.sends, time.Now())
	l.lastSend = time.Now()
	return l.fail
}

func (l *fakeLink) takeLost(drain bool) []lost {
	l.d.mu.Lock()
	defer l.d.mu.Unlock()
	if !drain {
		return nil
	}
	found := l.lostNext
	l.lostNext = nil
	return found
}

func (l *fakeLink) waiting() bool {
	l.d.mu.Lock()
	defer l.d.mu.Unlock()
	return l.waitFor > 0 && time.Since(l.lastSend) < l.waitFor
}

func (l *fakeLink) close() {
	l.d.mu.Lock()
	defer l.d.mu.Unlock()
	l.d.closes++
}

func (f *fakeDest) counts() (dials, closes int, sends []time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.dials, f.closes, append([]time.Time(nil), f.sends...)
}

var errNoAck = errors.New("request timeout (after 1 retries)")

// A destination that never acknowledges holds up its own worker only:
// Send returns at once (no time passes on the bubble's clock) however
// full its queue, drops and counts what does not fit, and the other
// destination gets everything at once. The slow one fails each send after
// its timeout and retries, on a fresh link, and is logged down once;
// Close waits for the send in flight, not for the queue.
func TestSlowDestinationHoldsUpOnlyItself(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		slow, fast := &fakeDest{}, &fakeDest{}
		const takes = 4 * time.Second // Timeout 2 s, one retry
		links := map[string]*fakeLink{
			"127.0.0.1:1": {d: slow, takes: takes, fail: errNoAck},
			"127.0.0.1:2": {d: fast},
		}
		dial := func(d Dest) (link, error) {
			l := links[d.Address]
			l.d.mu.Lock()
			l.d.dials++
			l.d.mu.Unlock()
			return l, nil
		}
		var logs testutil.Buffer
		s, err := newSender([]Dest{
			{Address: "127.0.0.1:1", Version: "v2c", Community: "c", Inform: true, Retries: 1, Timeout: 2 * time.Second, Queue: 2},
			{Address: "127.0.0.1:2", Version: "v2c", Community: "c", Queue: 64},
		}, slog.New(slog.NewTextHandler(&logs, nil)), dial, nil)
		if err != nil {
			t.Fatal(err)
		}
		begin := time.Now()
		n := Notification{Enterprise: asn1tree.OID{1, 3, 6, 1, 4, 1, 32473}, Specific: 1}
		s.Send(n)
		synctest.Wait() // the slow worker is in its first send
		for range 49 {
			s.Send(n)
		}
		if took := time.Since(begin); took != 0 {
			t.Errorf("50 sends took %v on the bubble's clock, want no time", took)
		}
		synctest.Wait()
		if _, _, sends := fast.counts(); len(sends) != 50 || sends[49] != begin {
			t.Errorf("fast destination: %d sends, want all 50 at once", len(sends))
		}
		if c := s.Counts(); c.Sent != 50 || c.Dropped != 47 || c.Failed != 0 || c.Down != 0 {
			t.Errorf("counts %+v, want 50 sent (fast), 47 dropped (slow: 1 in flight, 2 queued)", c)
		}

		time.Sleep(takes)
		synctest.Wait()
		if c := s.Counts(); c.Failed != 1 || c.Down != 1 {
			t.Errorf("after the first timeout: counts %+v, want 1 failed and the destination down", c)
		}
		time.Sleep(takes / 2) // into the second send
		s.Close()
		if took := time.Since(begin); took != 2*takes {
			t.Errorf("Close returned %v after the start, want %v: at the end of the send in flight", took, 2*takes)
		}
		dials, closes, sends := slow.counts()
		if len(sends) != 2 || sends[0].Sub(begin) != takes || sends[1].Sub(begin) != 2*takes {
			t.Errorf("slow destination sends ended at %v, want at %v and %v only", sends, takes, 2*takes)
		}
		if dials != 2 || closes != 2 {
			t.Errorf("slow destination: %d dials and %d closes, want a fresh link per failed send", dials, closes)
		}
		if c := s.Counts(); c.Failed != 2 || c.Sent != 50 {
			t.Errorf("after Close: counts %+v, want 2 failed, 50 sent", c)
		}
		if n := strings.Count(logs.String(), "trap destination failing"); n != 1 {
			t.Errorf("failing destination logged %d times, want once:\n%s", n, logs.String())
		}
	})
}

// A destination that fails, then answers, is logged down once and back
// once; its counts follow.
func TestDestinationDownAndBackLoggedOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &fakeDest{}
		l := &fakeLink{d: d, fail: errNoAck}
		var logs testutil.Buffer
		s, err := newSender([]Dest{{Address: "127.0.0.1:1", Version: "v2c", Community: "c"}},
			slog.New(slog.NewTextHandler(&logs, nil)), func(Dest) (link, error) { return l, nil }, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		n := Notification{Enterprise: asn1tree.OID{1, 3, 6, 1, 4, 1, 32473}, Specific: 1}
		for _, fail := range []error{errNoAck, errNoAck, nil, nil, errNoAck} {
			synctest.Wait()
			l.d.mu.Lock()
			l.fail = fail
			l.d.mu.Unlock()
			s.Send(n)
		}
		synctest.Wait()
		if c := s.Counts(); c.Sent != 2 || c.Failed != 3 || c.Down != 1 {
			t.Errorf("counts %+v, want 2 sent, 3 failed, down", c)
		}
		log := logs.String()
		if strings.Count(log, "trap destination failing") != 2 || strings.Count(log, "reachable again") != 1 {
			t.Errorf("want down, back, down logged once each:\n%s", log)
		}
	})
}

// Every send's outcome is reported with the notification's log index:
// taken, failed (an inform not acknowledged after its retries), dropped.
func TestOutcomesReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &fakeDest{}
		l := &fakeLink{d: d, takes: time.Second}
		var mu sync.Mutex
		got := map[uint32]string{}
		report := func(n *Notification, d Dest, err error) {
			mu.Lock()
			defer mu.Unlock()
			r := "ok"
			if err != nil {
				r = err.Error()
			}
			got[n.LogIndex] = d.String() + " " + r
		}
		s, err := newSender([]Dest{{Address: "127.0.0.1:1", Version: "v2c", Community: "c", Inform: true, Queue: 1}},
			nil, func(Dest) (link, error) { return l, nil }, report)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		n := Notification{Enterprise: asn1tree.OID{1, 3, 6, 1, 4, 1, 32473}, Specific: 1}
		n.LogIndex = 1
		s.Send(n)
		synctest.Wait() // 1 is in flight; the link reads fail when it ends
		l.d.mu.Lock()
		l.fail = errNoAck
		l.d.mu.Unlock()
		n.LogIndex = 2
		s.Send(n) // queued
		n.LogIndex = 3
		s.Send(n) // the queue of 1 is full
		time.Sleep(3 * time.Second)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		want := map[uint32]string{1: "v2c inform 127.0.0.1:1 " + errNoAck.Error(), 2: "v2c inform 127.0.0.1:1 " + errNoAck.Error(),
			3: "v2c inform 127.0.0.1:1 " + ErrDropped.Error()}
		for k, w := range want {
			if got[k] != w {
				t.Errorf("outcome of %d: %q, want %q", k, got[k], w)
			}
		}
	})
}

// A trap found lost (an ICMP error) marks its destination down, and the
// report of that trap says failed. A trap sent while it is down counts
// as sent but proves nothing: the destination is up again only once that
// trap has outlived its wait for an ICMP error, and says so once.
func TestLostTrapDownUntilOneOutlivesItsWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &fakeDest{}
		l := &fakeLink{d: d, waitFor: 10 * time.Second}
		var logs testutil.Buffer
		var mu sync.Mutex
		got := map[uint32][]error{}
		report := func(n *Notification, _ Dest, err error) {
			mu.Lock()
			defer mu.Unlock()
			got[n.LogIndex] = append(got[n.LogIndex], err)
		}
		s, err := newSender([]Dest{{Address: "127.0.0.1:1", Version: "v2c", Community: "c"}},
			slog.New(slog.NewTextHandler(&logs, nil)), func(Dest) (link, error) { return l, nil }, report)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		n := Notification{Enterprise: asn1tree.OID{1, 3, 6, 1, 4, 1, 32473}, Specific: 1, LogIndex: 1}
		s.Send(n)
		synctest.Wait()
		refused := errors.New("connection refused (ICMP error from 127.0.0.1 after the send)")
		d.mu.Lock()
		l.lostNext = []lost{{n: n, err: refused}}
		d.mu.Unlock()
		time.Sleep(lostCheck)
		synctest.Wait()
		if c := s.Counts(); c.Down != 1 || c.Failed != 1 {
			t.Fatalf("after the ICMP error: %+v, want down and 1 failed", c)
		}
		n.LogIndex = 2
		s.Send(n)
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if c := s.Counts(); c.Down != 1 || c.Sent != 2 {
			t.Errorf("5 s after a trap sent while down: %+v, want still down, 2 sent", c)
		}
		time.Sleep(6 * time.Second)
		synctest.Wait()
		if c := s.Counts(); c.Down != 0 {
			t.Errorf("after the trap's wait: %+v, want up", c)
		}
		mu.Lock()
		defer mu.Unlock()
		if r := got[1]; len(r) != 2 || r[0] != nil || r[1] != refused {
			t.Errorf("reports of trap 1: %v, want sent then %v", r, refused)
		}
		if r := got[2]; len(r) != 1 || r[0] != nil {
			t.Errorf("reports of trap 2: %v, want sent", r)
		}
		log := logs.String()
		if strings.Count(log, "trap destination failing") != 1 || strings.Count(log, "reachable again") != 1 {
			t.Errorf("want down and up logged once each:\n%s", log)
		}
	})
}
