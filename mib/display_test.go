package mib_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/mib"
	"github.com/perfagent/subagent/mib/mibtest"
	"github.com/perfagent/subagent/responder"
	"github.com/perfagent/subagent/spmi"
)

// net-snmp prints a scaled float in decimal from the integer on the wire,
// using the module's DISPLAY-HINT and UNITS: the synthetic tree served by
// the standalone responder, read with snmpget.
func TestScaledValuesShowInDecimal(t *testing.T) {
	mibtest.Require(t, "snmpget")
	s := synthetic(t)
	m := generate(t, mib.FromSnapshot(s), mib.Options{Instances: true})
	// The values the synthetic provider sets, worked out by hand.
	want := map[string]string{
		"memRealPctFree.0": "Gauge32: 12.3 percent",         // 12.34, 1 place
		"memRealTemp.0":    "INTEGER: -5.5 degrees Celsius", // -5.5, 1 place
		"cpuCpu0Idle.0":    "Gauge32: 98.25 percent",        // 98.25, 2 places
		"memRealFrag.0":    "Gauge32: .250",                 // 0.25: net-snmp drops the leading 0
		"cpuCpu0User.0":    "Counter64: 150 0.01 seconds",   // 1.5 s, no hint on Counter64
		"memRealSize.0":    "Counter64: 8589934592 KiB",
		"procPid.4242.2.0": `STRING: "init"`,
		"procPid.4242.3.0": "INTEGER: -5",
		"procRunque.0":     "Gauge32: 2",
		"memRealAvail.0":   "Counter64: 123456 0.01 KiB",
		"cpuTotalIdle.0":   "Gauge32: 97.50 percent",
		"cpuCpu1User.0":    "Counter64: 150 0.01 seconds",
		"memRealPages.0":   "Counter64: 77 pages",
		"procPid.1.1.0":    "Counter64: 5",
		"cpuTotalUser.0":   "Counter64: 300 0.01 seconds",
		"cpuCpu1Idle.0":    "Gauge32: 98.25 percent",
	}
	snmpgetShows(t, s, m, want)
}

// snmpgetShows serves s with the standalone responder and checks what
// snmpget, loading m, prints for each name of want.
func snmpgetShows(t *testing.T, s *spmi.Snapshot, m *mib.Module, want map[string]string) {
	t.Helper()
	_, dirs := writeModule(t, m)
	r, err := responder.New(responder.Config{Listen: "127.0.0.1:0", Community: "public"},
		func() asn1tree.View { return s.View() }, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	defer func() { cancel(); <-done }()
	<-r.Ready()
	if r.Addr() == nil {
		t.Fatalf("responder did not start: %v", <-done)
	}
	var names []string
	for n := range want {
		names = append(names, m.Name+"::"+n)
	}
	args := append([]string{"-v2c", "-c", "public", "-M", strings.Join(dirs, ":"), "-m", m.Name, r.Addr().String()}, names...)
	out, stderr, err := mibtest.Run(t, mibtest.NetSNMPEnv(t), "snmpget", args...)
	if err != nil || strings.TrimSpace(stderr) != "" {
		t.Fatalf("snmpget: %v\n%s%s", err, out, stderr)
	}
	got := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		name, val, _ := strings.Cut(l, " = ")
		got[strings.TrimPrefix(name, m.Name+"::")] = val
	}
	for n, w := range want {
		if got[n] != w {
			t.Errorf("%s: snmpget shows %q, want %q", n, got[n], w)
		}
	}
}

// Booleans and times as net-snmp shows them: TruthValue's names for the
// 1 and 0 of the SPMI view, DateAndTime in UTC for seconds since 1970.
func TestTruthValuesAndTimesShow(t *testing.T) {
	mibtest.Require(t, "snmpget")
	b := spmi.NewBuilder(testBase, nil, time.Unix(0, 0))
	cx, err := b.Context(nil, &spmi.CxDesc{Name: "Agent", Descr: "Agent", ASN: 12})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 25, 22, 7, 53, 0, time.UTC)
	if err := b.Stats(cx, []spmiwire.StatDesc{
		{Name: "up", Descr: "Up", ASN: 1, Max: 1, Val: ddswire.SiQuantity, Form: spmiwire.FormBool},
		{Name: "down", Descr: "Down", ASN: 2, Max: 1, Val: ddswire.SiQuantity, Form: spmiwire.FormBool},
		{Name: "since", Descr: "Since", ASN: 3, Max: 1 << 31, Val: ddswire.SiQuantity, Form: spmiwire.FormTime},
	}, []spmiwire.Value{spmiwire.Uint(1), spmiwire.Uint(0), spmiwire.Uint(uint64(at.Unix()))}); err != nil {
		t.Fatal(err)
	}
	s := b.Finish()
	m := generate(t, mib.FromSnapshot(s), mib.Options{})
	snmpgetShows(t, s, m, map[string]string{
		"agentUp.0":    "INTEGER: true(1)",
		"agentDown.0":  "INTEGER: false(2)",
		"agentSince.0": "STRING: 2026-11-25,22:7:53.0,+0:0",
	})
}
