package daemon

import (
	"testing"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/hotset"
)

// The VarBinds after snmpTrapOID.0: the hot items' instances with their
// served values, hottest first (items without a value left out), then
// name, peer context, threshold and severity.
func TestNotificationLayout(t *testing.T) {
	base := asn1tree.OID{1, 3, 6, 1, 4, 1, 32473, 1}
	ev := hotset.Event{
		Def:    hotset.Def{Name: "busydisks", TrapNo: 21, Threshold: -10, Severity: 2},
		Parent: "Disk/",
		Items: []hotset.Item{
			{Name: "sdb", OID: base.Append(4, 2, 6, 0), Served: asn1tree.Counter(900)},
			{Name: "sdx", OID: base.Append(4, 9, 6, 0)},
			{Name: "sda", OID: base.Append(4, 1, 6, 0), Served: asn1tree.Counter(800)},
		},
	}
	n, err := Notification(base, ev, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if n.TrapOID().String() != base.String()+".0.21" || n.Specific != 21 || !n.Enterprise.Equal(base) {
		t.Errorf("trap OID %s, specific %d", n.TrapOID(), n.Specific)
	}
	want := []string{
		base.String() + ".4.2.6.0=900", base.String() + ".4.1.6.0=800",
		base.String() + `.14.0.1.0="busydisks"`, base.String() + `.14.0.2.0="Disk/"`,
		base.String() + ".14.0.3.0=-10", base.String() + ".14.0.4.0=2",
	}
	if len(n.Vars) != len(want) {
		t.Fatalf("%d VarBinds: %+v", len(n.Vars), n.Vars)
	}
	for i, vb := range n.Vars {
		if got := vb.OID.String() + "=" + vb.Value.String(); got != want[i] {
			t.Errorf("VarBind %d: %s, want %s", i+3, got, want[i])
		}
	}
}
