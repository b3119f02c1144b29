package daemon

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/hotset"
)

// The VarBinds after snmpTrapOID.0: the NOTIFICATION-TYPE's OBJECTS in
// order (name, peer context, threshold, severity, hottest peer, its
// compared value, units, list, suppressed since the last sent), then the hot items' instances with their
// served values, hottest first; items without a value and Counter64 ones
// (which SNMPv1 cannot carry) left out.
func TestNotificationLayout(t *testing.T) {
	base := asn1tree.OID{1, 3, 6, 1, 4, 1, 32473, 1}
	ev := hotset.Event{
		Def:        hotset.Def{Name: "busydisks", TrapNo: 21, Threshold: -10, Severity: 2},
		Parent:     "Disk/",
		Suppressed: 7,
		Items: []hotset.Item{
			{Name: "sdb", OID: base.Append(4, 2, 6, 0), Value: 2.345, Units: "percent", Served: asn1tree.Gauge(234)},
			{Name: "sdx", OID: base.Append(4, 9, 6, 0), Value: 3},
			{Name: "sdc", OID: base.Append(4, 3, 6, 0), Value: 4, Served: asn1tree.Counter(1 << 40)},
			{Name: "sda", OID: base.Append(4, 1, 6, 0), Value: 8, Served: asn1tree.Int(-8)},
		},
	}
	n, err := Notification(base, ev, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if n.TrapOID().String() != base.String()+".0.21" || n.Specific != 21 || !n.Enterprise.Equal(base) {
		t.Errorf("trap OID %s, specific %d", n.TrapOID(), n.Specific)
	}
	b := base.String()
	want := []string{
		b + `.14.0.1.0="busydisks"`, b + `.14.0.2.0="Disk/"`, b + ".14.0.3.0=-10", b + ".14.0.4.0=2",
		b + `.14.0.5.0="sdb"`, b + `.14.0.6.0="2.35"`, b + `.14.0.7.0="percent"`, b + `.14.0.8.0="sdb=2.35 sdx=3 sdc=4 sda=8"`,
		b + ".14.0.12.0=7", b + ".4.2.6.0=234", b + ".4.1.6.0=-8",
	}
	if len(n.Vars) != len(want) {
		t.Fatalf("%d VarBinds: %+v", len(n.Vars), n.Vars)
	}
	for i, vb := range n.Vars {
		if got := vb.OID.String() + "=" + vb.Value.String(); got != want[i] {
			t.Errorf("VarBind %d: %s, want %s", i+3, got, want[i])
		}
		if vb.Value.Kind == asn1tree.Counter64 {
			t.Errorf("VarBind %d is Counter64", i+3)
		}
	}
}

// Events the hotset's rate limit held back are counted (Agent/traps
// suppressed), logged once per episode, and neither logged as
// exceptions nor sent (raise reaches no sender for them).
func TestHeldEventsAreCountedAndLoggedOncePerEpisode(t *testing.T) {
	var buf bytes.Buffer
	hs := &hotsets{log: slog.New(slog.NewTextHandler(&buf, nil))}
	d := hotset.Def{Name: "full", GrandParent: "FS", Stat: "used", Excp: hotset.ExcpBoth, TrapNo: 4, Severity: 1,
		Limit: hotset.Limit{Burst: 3, Every: 10 * time.Second}}
	for episode := range 2 {
		for i := range 5 {
			hs.raise(hotset.Event{Def: d, Parent: fmt.Sprintf("FS/v%d-%d/", episode, i), Held: true, Suppressed: uint64(i + 1)})
		}
	}
	out := buf.String()
	if n := strings.Count(out, "suppressed by its rate limit"); n != 2 || strings.Contains(out, "hotset exception") ||
		!strings.Contains(out, "notify_burst=3 notify_interval=10s") {
		t.Errorf("log of 2 episodes of 5 held events (%d episode lines):\n%s", n, out)
	}
	if n := hs.suppressed.Load(); n != 10 {
		t.Errorf("Agent/traps/suppressed %d, want 10", n)
	}
}
