package hotset

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// kinds writes evs as "raise:a,b" or "clear:a=1" per event, joined by spaces.
func kinds(evs []Event) string {
	var s []string
	for _, ev := range evs {
		if ev.Cleared {
			s = append(s, fmt.Sprintf("clear:%s=%s", ev.Items[0].Name, FormatValue(ev.Items[0].Value)))
		} else {
			s = append(s, "raise:"+names(ev.Items))
		}
	}
	return strings.Join(s, " ")
}

// RMON hysteresis on a controlled clock, one evaluation a minute: a peer
// raises once, stays quiet while between the thresholds or beyond again,
// clears once back at the falling threshold, and raises again only once
// re-armed and with the frequency passed since its last event.
func TestRearmHysteresisAndCleared(t *testing.T) {
	f, c := newFake(), newClock()
	disks(f, map[string]uint64{"a": 0, "b": 0}, map[string]int64{"a": 0, "b": 1})
	e := mustEngine(t, c, Def{Name: "q", GrandParent: "Disk", Stat: "qlen", MaxResp: 2, Threshold: 5, Rearm: 2,
		Cleared: true, Frequency: 5 * time.Minute, Excp: ExcpBoth, Severity: 3, TrapNo: 7})
	steps := []struct {
		a    int64
		want string
	}{
		{9, "raise:a"},   // 0: crosses
		{4, ""},          // 1: between the thresholds
		{9, ""},          // 2: beyond again, not re-armed
		{1, "clear:a=1"}, // 3: back past the falling threshold
		{9, ""},          // 4: re-armed and beyond, but 4 min since the raise
		{9, "raise:a"},   // 5: the frequency has passed
		{3, ""},          // 6: above the falling threshold still
		{2, "clear:a=2"}, // 7: at it: no longer beyond it
		{2, ""},          // 8
	}
	for i, st := range steps {
		disks(f, nil, map[string]int64{"a": st.a})
		if got := kinds(e.Evaluate(snapAt(f, c.t))); got != st.want {
			t.Fatalf("minute %d, a=%d: events %q, want %q", i, st.a, got, st.want)
		}
		c.add(time.Minute)
	}
	v := e.Views()[0]
	if len(v.Exceptions) != 2 || v.Events != 4 {
		t.Errorf("%d exceptions (want the 2 raises; clears are none), %d events (want 4)", len(v.Exceptions), v.Events)
	}
}

// A negative threshold re-arms when the value rises to the falling
// threshold's absolute value; without cleared the re-arm is silent.
func TestRearmBelowAndSilent(t *testing.T) {
	f, c := newFake(), newClock()
	disks(f, map[string]uint64{"a": 0}, map[string]int64{"a": 10})
	e := mustEngine(t, c, Def{Name: "low", GrandParent: "Disk", Stat: "qlen", MaxResp: 1, Threshold: -5, Rearm: -8,
		Frequency: 5 * time.Minute, Excp: ExcpTrap, TrapNo: 3})
	for i, st := range []struct {
		a    int64
		want string
	}{{10, ""}, {4, "raise:a"}, {7, ""}, {3, ""}, {8, ""}, {4, "raise:a"}} {
		disks(f, nil, map[string]int64{"a": st.a})
		if got := kinds(e.Evaluate(snapAt(f, c.t))); got != st.want {
			t.Fatalf("step %d, a=%d: events %q, want %q", i, st.a, got, st.want)
		}
		c.add(5 * time.Minute)
	}
}

// Peers of one peer set keep their own state: one that raised stays
// raised while another crosses; a vanished peer is forgotten.
func TestRearmPerPeer(t *testing.T) {
	f, c := newFake(), newClock()
	disks(f, map[string]uint64{"a": 0, "b": 0}, map[string]int64{"a": 9, "b": 0})
	e := mustEngine(t, c, Def{Name: "q", GrandParent: "Disk", Stat: "qlen", MaxResp: 5, Threshold: 5, Rearm: 2,
		Cleared: true, Frequency: 5 * time.Minute, Excp: ExcpTrap, TrapNo: 7})
	check := func(step, want string) {
		t.Helper()
		if got := kinds(e.Evaluate(snapAt(f, c.t))); got != want {
			t.Fatalf("%s: events %q, want %q", step, got, want)
		}
		c.add(5 * time.Minute)
	}
	check("a crosses", "raise:a")
	disks(f, nil, map[string]int64{"b": 7})
	check("b crosses, a still beyond", "raise:b")
	disks(f, nil, map[string]int64{"a": 0, "b": 8})
	check("a falls, b still beyond", "clear:a=0")
	f.mu.Lock()
	delete(f.busy, "b")
	delete(f.qlen, "b")
	f.mu.Unlock()
	check("b vanishes", "")
	disks(f, map[string]uint64{"b": 0}, map[string]int64{"b": 9})
	check("b comes back beyond: armed afresh", "raise:b")
}

func TestValidateRearm(t *testing.T) {
	base := Def{Name: "q", GrandParent: "Disk", Stat: "qlen", MaxResp: 1, Threshold: 5,
		Frequency: 5 * time.Minute, Excp: ExcpTrap, TrapNo: 7}
	for _, tc := range []struct {
		rearm, th int
		cleared   bool
		excp      Excp
		want      string // in the error; "" for none
	}{
		{2, 5, true, ExcpTrap, ""},
		{5, 5, false, ExcpTrap, ""},
		{6, 5, false, ExcpTrap, "rearm: 6 is not from 1 to the threshold 5"},
		{-1, 5, false, ExcpTrap, "rearm: -1 is not from 1"},
		{-8, -5, true, ExcpTrap, ""},
		{-3, -5, false, ExcpTrap, "rearm: -3 is not negative and at most the threshold -5"},
		{0, 5, true, ExcpTrap, "cleared: needs a rearm"},
		{2, 5, false, ExcpNone, "rearm: needs excp_type"},
	} {
		d := base
		d.Rearm, d.Threshold, d.Cleared, d.Excp = tc.rearm, tc.th, tc.cleared, tc.excp
		if d.Excp == ExcpNone {
			d.Feed = FeedAlways
		}
		err := d.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("rearm %d threshold %d: %v", tc.rearm, tc.th, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("rearm %d threshold %d: error %v, want %q", tc.rearm, tc.th, err, tc.want)
		}
	}
}
