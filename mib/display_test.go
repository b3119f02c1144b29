package mib_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/mib"
	"github.com/perfagent/subagent/mib/mibtest"
	"github.com/perfagent/subagent/responder"
)

// net-snmp prints a scaled float in decimal from the integer on the wire,
// using the module's DISPLAY-HINT and UNITS: the synthetic tree served by
// the standalone responder, read with snmpget.
func TestScaledValuesShowInDecimal(t *testing.T) {
	mibtest.Require(t, "snmpget")
	s := synthetic(t)
	m := generate(t, mib.FromSnapshot(s), mib.Options{Instances: true})
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
