package mib_test

import (
	"strings"
	"testing"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/mib"
)

func TestNotificationDefinitions(t *testing.T) {
	if got := mib.HotsetExceeded.OID(testBase).String(); got != testBase.String()+".0.1" {
		t.Errorf("hotsetExceeded at %s", got)
	}
	if got := mib.HotsetCleared.OID(testBase).String(); got != testBase.String()+".0.2" {
		t.Errorf("hotsetCleared at %s", got)
	}
	seen := map[string]bool{}
	for i, o := range mib.NotifyObjects() {
		if want := testBase.String() + ".14.0." + itoa(uint32(i+1)) + ".0"; o.Instance(testBase).String() != want {
			t.Errorf("%s: instance %s, want %s", o.Name, o.Instance(testBase), want)
		}
		if seen[o.Name] || seen[o.Arc.String()] {
			t.Errorf("%s: name or arc used twice", o.Name)
		}
		seen[o.Name], seen[o.Arc.String()] = true, true
	}
	for _, n := range mib.Notifications() {
		if len(n.Objects) == 0 || n.Arc[0] != mib.NotificationsArc || len(n.Arc) != 2 {
			t.Errorf("%s: arc %s, %d objects", n.Name, n.Arc, len(n.Objects))
		}
	}
}

func TestBindChecksNumberAndKinds(t *testing.T) {
	oid := testBase.Append(1, 1, 4, 0)
	vals := []asn1tree.Value{
		asn1tree.Str("busy disks"), asn1tree.Str("Disk/sda/busy"), {Kind: asn1tree.ObjectIdentifier, OID: oid},
		asn1tree.Int(93), asn1tree.Int(80), asn1tree.Int(2), asn1tree.Int(5),
	}
	bs, err := mib.HotsetExceeded.Bind(testBase, vals...)
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 7 || bs[1].OID.String() != testBase.String()+".14.0.2.0" || bs[1].Value.Str != "Disk/sda/busy" {
		t.Errorf("bindings: %+v", bs)
	}
	if _, err := mib.HotsetExceeded.Bind(testBase, vals[:6]...); err == nil {
		t.Error("six values for seven objects accepted")
	}
	bad := append([]asn1tree.Value(nil), vals...)
	bad[3] = asn1tree.Gauge(93)
	if _, err := mib.HotsetCleared.Bind(testBase, bad...); err == nil || !strings.Contains(err.Error(), "hotsetValue") {
		t.Errorf("Gauge32 for hotsetValue: %v", err)
	}
}

// The module declares every notification with its objects, and every
// object as accessible-for-notify under the Hotset arc.
func TestModuleDeclaresTheNotifications(t *testing.T) {
	m := generate(t, treeOf(t, "Mem/ 2", "Mem/free 2.1"), mib.Options{})
	text := flat(m.Text)
	for _, n := range mib.Notifications() {
		var names []string
		for _, o := range n.Objects {
			names = append(names, o.Name)
		}
		if want := n.Name + " NOTIFICATION-TYPE OBJECTS { " + strings.Join(names, ", ") + " }"; !strings.Contains(text, want) {
			t.Errorf("module lacks %q", want)
		}
	}
	for _, o := range mib.NotifyObjects() {
		want := o.Name + " OBJECT-TYPE SYNTAX " + o.Syntax + " MAX-ACCESS accessible-for-notify"
		if !strings.Contains(text, want) {
			t.Errorf("module lacks %q", want)
		}
	}
	for _, g := range []string{"hotsetObjectsGroup OBJECT-GROUP", "hotsetNotificationsGroup NOTIFICATION-GROUP"} {
		if !strings.Contains(text, g) {
			t.Errorf("module lacks %q", g)
		}
	}
}
