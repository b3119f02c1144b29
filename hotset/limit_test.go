package hotset

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// volumes makes the FS peer sets: n volume groups named by round, each
// with one volume at used.
func volumes(f *fakeHost, round, n int, used float64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.used = map[string]map[string]float64{}
	for i := range n {
		f.used[fmt.Sprintf("r%dv%d", round, i)] = map[string]float64{"lv": used}
	}
}

// A storm at the source: 100 peers crossing every second, each in a peer
// set with a new name every second, for 2 minutes. Each peer set raises
// its event (the per-peer-set frequency cannot hold new names back), and
// every one is evaluated, fed and recorded as an exception, but the
// hotset's bucket lets through at most burst + rate × time reports, and
// each report let through carries the number held back since the one
// before.
func TestStormIsBoundedPerHotset(t *testing.T) {
	f, c := newFake(), newClock()
	e, err := New([]Def{{Name: "full", GrandParent: "FS", Stat: "used", MaxResp: 1, Threshold: 80,
		Frequency: 5 * time.Minute, Feed: FeedThreshold, Excp: ExcpBoth, Severity: 2, TrapNo: 4}}, 1000, c.now)
	if err != nil {
		t.Fatal(err)
	}
	const peers, seconds = 100, 120
	lim := DefaultLimit
	var sent, held, pending, carried uint64
	var events uint64
	for sec := range seconds {
		volumes(f, sec, peers, 95)
		evs := e.Evaluate(snapAt(f, c.t))
		if len(evs) != peers {
			t.Fatalf("second %d: %d events, want one per new peer set (%d)", sec, len(evs), peers)
		}
		events += uint64(len(evs))
		for _, ev := range evs {
			if ev.Held {
				held++
				pending++
				if ev.Suppressed != pending {
					t.Fatalf("second %d: a held event says %d held in its episode, want %d", sec, ev.Suppressed, pending)
				}
				continue
			}
			sent++
			if ev.Suppressed != pending {
				t.Fatalf("second %d: the report let through carries %d suppressed, want %d", sec, ev.Suppressed, pending)
			}
			carried += ev.Suppressed
			pending = 0
		}
		v := e.Views()[0]
		if len(v.Result.Groups) != peers || v.Result.Groups[0].Avail != 1 || len(v.Result.Groups[0].Items) != 1 {
			t.Fatalf("second %d: the feed has %d peer sets (first %+v), want every crossing", sec, len(v.Result.Groups), v.Result.Groups[0])
		}
		c.add(time.Second)
	}
	// Tokens: the burst, then one per Every over the 119 s after the first.
	want := uint64(lim.Burst) + uint64((seconds-1)*time.Second/lim.Every)
	if most := uint64(lim.Burst) + uint64(seconds*time.Second/lim.Every); sent > most || sent != want {
		t.Errorf("%d reports let through of %d events; want %d (at most burst + rate × time = %d)", sent, events, want, most)
	}
	if held+sent != events || carried+pending != held {
		t.Errorf("held %d + sent %d != %d events, or carried %d + pending %d != held", held, sent, events, carried, pending)
	}
	v := e.Views()[0]
	if v.Events != events || v.Held != held || v.Limit != lim {
		t.Errorf("view: events %d held %d limit %+v; want %d, %d, %+v", v.Events, v.Held, v.Limit, events, held, lim)
	}
	if n := len(v.Exceptions); n != 1000 || v.Exceptions[n-1].Seq != uint32(events) {
		t.Errorf("exceptions: %d kept, last seq %d; want 1000 kept, the last %d (every event)", n, v.Exceptions[n-1].Seq, events)
	}
	// The peer sets that came and went are remembered for a frequency at most.
	c.add(5 * time.Minute)
	volumes(f, 0, 1, 10)
	e.Evaluate(snapAt(f, c.t))
	if n := len(e.sets[0].last); n != 0 {
		t.Errorf("%d peer sets still remembered a frequency after they went", n)
	}
}

// A hotset's own Limit overrides the engine's default; SetLimit sets the
// default; a reload that changes only the Limit keeps the state (no
// event raised again) and the bucket.
func TestLimitPerHotsetAndReload(t *testing.T) {
	f, c := newFake(), newClock()
	d := Def{Name: "full", GrandParent: "FS", Stat: "used", MaxResp: 1, Threshold: 80,
		Frequency: 5 * time.Minute, Excp: ExcpTrap, TrapNo: 4, Limit: Limit{Burst: 2}}
	e := mustEngine(t, c, d)
	e.SetLimit(Limit{Every: time.Minute})
	if v := e.Views()[0]; v.Limit != (Limit{Burst: 2, Every: time.Minute}) {
		t.Fatalf("limit in force %+v", v.Limit)
	}
	held := func(evs []Event) (n int) {
		for _, ev := range evs {
			if ev.Held {
				n++
			}
		}
		return n
	}
	volumes(f, 0, 5, 95)
	if evs := e.Evaluate(snapAt(f, c.t)); len(evs) != 5 || held(evs) != 3 {
		t.Fatalf("%d events, %d held; want 5, 3 (burst 2)", len(evs), held(evs))
	}
	d.Limit = Limit{Burst: 3, Every: 30 * time.Second}
	if err := e.Replace([]Def{d}); err != nil {
		t.Fatal(err)
	}
	c.add(30 * time.Second)
	if evs := e.Evaluate(snapAt(f, c.t)); len(evs) != 0 {
		t.Fatalf("a reload of the Limit alone raised %d events again", len(evs))
	}
	volumes(f, 1, 3, 95)
	evs := e.Evaluate(snapAt(f, c.t))
	if len(evs) != 3 || held(evs) != 2 || evs[0].Suppressed != 3 || e.Views()[0].Held != 5 {
		t.Errorf("after a reload: %d events, %d held, first carries %d, %d held in all; want 3, 2, 3, 5 (one token in 30 s, kept bucket)",
			len(evs), held(evs), evs[0].Suppressed, e.Views()[0].Held)
	}
	for _, bad := range []Limit{{Burst: -1}, {Burst: MaxBurst + 1}, {Every: time.Millisecond}, {Every: 25 * time.Hour}} {
		d.Limit = bad
		err := d.Validate()
		if err == nil || !strings.Contains(err.Error(), "notify_") {
			t.Errorf("limit %+v: %v", bad, err)
		}
	}
}
