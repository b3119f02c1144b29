package daemon

import (
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/arm"
	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/config"
	"github.com/perfagent/subagent/internal/snmpdtest"
	"github.com/perfagent/subagent/notiflog"
	"github.com/perfagent/subagent/rtimearm/armtest"
	"github.com/perfagent/subagent/slo"
	"github.com/perfagent/subagent/traps"
)

// A Go program's checkouts (through the real library and arm.sock) on a
// controlled clock, one evaluation of the shipped alarms every 10 s: a
// minute of checkouts slower than the threshold raises page at the first
// evaluation where the burn rates over 1 h and 5 min both reach 14.4, and
// clears it at the first where they no longer do; ticket does not raise
// for it, and does for a fault of four minutes. Each change reaches a
// real snmptrapd, the notification log and the daemon's log.
func TestBurnRateAlarmsOnAControlledClock(t *testing.T) {
	trapd := snmpdtest.StartTrapd(t)
	cfg, err := config.Load(nil)
	if err != nil {
		t.Fatal(err)
	}
	var logBuf testutil.Buffer
	log := slog.New(slog.NewTextHandler(&logBuf, nil))
	notes, err := notiflog.Open("", 100, 0, nil, log)
	if err != nil {
		t.Fatal(err)
	}
	base := asn1tree.OID{1, 3, 6, 1, 4, 1, 32473, 1}
	hs := &hotsets{notes: notes, log: log, base: base, start: time.Now()}
	s, err := hs.newSender([]traps.Dest{{Address: trapd.Addr, Version: "v2c", Community: "public"}})
	if err != nil {
		t.Fatal(err)
	}
	hs.sender = s
	t.Cleanup(s.Close)
	o := &objectives{d: &Daemon{hot: hs, log: log}, set: slo.NewSet([]slo.Objective{
		{Name: "checkout", Application: "Shop*", Transaction: "Checkout", Threshold: 300 * time.Millisecond, Target: 0.999, Window: 720 * time.Hour}})}
	o.set.SetRules(sloRules(cfg.SLO))

	var clock atomic.Int64
	clock.Store(time.Date(2026, 11, 2, 0, 0, 5, 0, time.UTC).UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()) }
	reg, tr := armtest.Checkout(t, o.set, now)

	// step is 10 s of 20 checkouts, slow or not, then one evaluation; it
	// checks that the events are exactly the changes of the two-window
	// conditions, computed from the served burn rates before it.
	raised := map[string]bool{}
	var got []slo.Event
	step := func(slow bool) {
		clock.Add(int64(10 * time.Second))
		for range 20 {
			d := 20 * time.Millisecond
			if slow {
				d = time.Second
			}
			tr.Report(arm.Good, d)
		}
		reg.DrainAll()
		now := now()
		st := o.set.Statuses(now)[0]
		want := map[string]bool{}
		for _, r := range o.set.Rules() {
			long, short := st.Burn[periodIndex(t, r.Long)], st.Burn[periodIndex(t, r.Short)]
			want[r.Name] = long >= r.Factor && short >= r.Factor
		}
		evs := o.evaluate(now)
		for _, name := range []string{"page", "ticket"} {
			changed := false
			for _, ev := range evs {
				if ev.Rule.Name == name {
					changed = true
					if ev.Raised != want[name] {
						t.Fatalf("%s: %s %v, want %v", now, name, ev.Raised, want[name])
					}
				}
			}
			if changed != (want[name] != raised[name]) {
				t.Fatalf("%s: %s changed %v, the conditions say %v (burn rates %v)", now, name, changed, want[name] != raised[name], st.Burn)
			}
			raised[name] = want[name]
		}
		got = append(got, evs...)
	}
	for range 6*360 + 60 { // 6 h 10 min of good checkouts
		step(false)
	}
	if len(got) != 0 {
		t.Fatalf("alarms without a fault: %+v", got)
	}
	for range 6 { // a minute's fault
		step(true)
	}
	for range 90 {
		step(false)
	}
	if len(got) != 2 || got[0].Rule.Name != "page" || !got[0].Raised || got[1].Rule.Name != "page" || got[1].Raised {
		t.Fatalf("after a minute's fault: %+v, want page raised and cleared", got)
	}
	t.Logf("page raised at burn rates %.3f (1 h) %.3f (5 min), cleared at %.3f %.3f", got[0].LongBurn, got[0].Short, got[1].LongBurn, got[1].Short)
	for range 24 { // four minutes
		step(true)
	}
	for range 360 {
		step(false)
	}
	var ticket []bool
	for _, ev := range got {
		if ev.Rule.Name == "ticket" {
			ticket = append(ticket, ev.Raised)
		}
	}
	if len(ticket) != 2 || !ticket[0] || ticket[1] {
		t.Fatalf("after a four minutes' fault, ticket: %v, want raised and cleared", ticket)
	}

	// Each event in snmptrapd, the notification log and the log.
	want := func(ev slo.Event) string {
		no := "32773"
		if ev.Raised {
			no = "32772"
		}
		return fmt.Sprintf(".%s.0.%s\t.%s.19.0.1.0 = STRING: \"checkout\"\t.%s.19.0.2.0 = STRING: \"%s\"", base, no, base, base, ev.Rule.Name)
	}
	var subs []string
	for _, ev := range got {
		subs = append(subs, want(ev))
	}
	if _, err := trapd.WaitFor(30*time.Second, subs...); err != nil {
		t.Fatalf("%v\n%s", err, trapd.Log())
	}
	v := notes.View()
	if len(v.Entries) != len(got) {
		t.Fatalf("%d notifications logged, want %d", len(v.Entries), len(got))
	}
	for i, e := range v.Entries {
		w := base.Append(0, 32773)
		if got[i].Raised {
			w = base.Append(0, 32772)
		}
		if !e.OID.Equal(w) || len(e.Vars) != 7 {
			t.Errorf("log entry %d: %s with %d VarBinds, want %s with 7", i, e.OID, len(e.Vars), w)
		}
	}
	for _, w := range []string{`level=WARN msg="slo alarm raised" objective=checkout alarm=page factor=14.4 long=1h0m0s`,
		`msg="slo alarm cleared" objective=checkout alarm=page`, `msg="slo alarm raised" objective=checkout alarm=ticket factor=6 long=6h0m0s`} {
		if !strings.Contains(logBuf.String(), w) {
			t.Errorf("the log lacks %s", w)
		}
	}
}

func periodIndex(t *testing.T, d time.Duration) int {
	for i, p := range slo.Periods {
		if p == d {
			return i
		}
	}
	t.Fatalf("%v is not a served period", d)
	return -1
}
