package schema_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/mib/schema"
	"github.com/perfagent/subagent/spmi"
)

var testBase = asn1tree.MustParse("1.3.6.1.4.1.32473.1")

func itoa(n uint32) string { return strconv.FormatUint(uint64(n), 10) }

func TestNotificationDefinitions(t *testing.T) {
	if got := schema.HotsetTrap(7).OID(testBase).String(); got != testBase.String()+".0.7" {
		t.Errorf("hotsetTrap7 at %s", got)
	}
	seen := map[string]bool{}
	next := map[uint32]uint32{} // the objects of each arc (hotset's, SLO's) are numbered from 1
	for _, o := range schema.NotifyObjects() {
		next[o.Arc[0]]++
		if want := testBase.String() + "." + itoa(o.Arc[0]) + ".0." + itoa(next[o.Arc[0]]) + ".0"; o.Instance(testBase).String() != want {
			t.Errorf("%s: instance %s, want %s", o.Name, o.Instance(testBase), want)
		}
		if seen[o.Name] || seen[o.Arc.String()] {
			t.Errorf("%s: name or arc used twice", o.Name)
		}
		seen[o.Name], seen[o.Arc.String()] = true, true
	}
	for _, n := range schema.Notifications() {
		if len(n.Objects) == 0 || n.Arc[0] != spmi.ASNNotifications || len(n.Arc) != 2 {
			t.Errorf("%s: arc %s, %d objects", n.Name, n.Arc, len(n.Objects))
		}
	}
}

// No object a hotset notification carries is Counter64: SNMPv1 receivers
// and a master's v1 sinks must get every one (RFC 3584 3.2). The first
// four keep their positions for translators configured before.
func TestNotificationObjectsTranslateToV1(t *testing.T) {
	objs := schema.HotsetTrap(1).Objects
	want := []string{"hotsetName", "hotsetPeerContext", "hotsetThreshold", "hotsetSeverity",
		"hotsetPeerName", "hotsetPeerValue", "hotsetValueUnits", "hotsetPeerList", "hotsetSuppressed"}
	if len(objs) != len(want) {
		t.Fatalf("%d objects, want %d", len(objs), len(want))
	}
	for i, o := range objs {
		arc := uint32(i + 1)
		if o.Name == "hotsetSuppressed" {
			arc = 12 // added after the daemon's own objects (9..11), last in the VarBinds
		}
		if o.Name != want[i] || o.Arc[len(o.Arc)-1] != arc {
			t.Errorf("object %d: %s at %s, want %s at .%d", i+1, o.Name, o.Arc, want[i], arc)
		}
		if o.Kind == asn1tree.Counter64 || strings.Contains(o.Syntax, "Counter") {
			t.Errorf("%s is %s (%s): SNMPv1 cannot carry it", o.Name, o.Kind, o.Syntax)
		}
	}
}

func TestBindChecksNumberAndKinds(t *testing.T) {
	vals := []asn1tree.Value{asn1tree.Str("busydisks"), asn1tree.Str("Disk/"), asn1tree.Int(80), asn1tree.Int(2),
		asn1tree.Str("sda"), asn1tree.Str("93.5"), asn1tree.Str("percent"), asn1tree.Str("sda=93.5"), asn1tree.Gauge(4)}
	bs, err := schema.HotsetTrap(1).Bind(testBase, vals...)
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 9 || bs[8].OID.String() != testBase.String()+".14.0.12.0" || bs[8].Value.Kind != asn1tree.Gauge32 || bs[1].OID.String() != testBase.String()+".14.0.2.0" || bs[1].Value.Str != "Disk/" ||
		bs[5].OID.String() != testBase.String()+".14.0.6.0" || bs[5].Value.Str != "93.5" {
		t.Errorf("bindings: %+v", bs)
	}
	if _, err := schema.HotsetTrap(1).Bind(testBase, vals[:8]...); err == nil {
		t.Error("eight values for nine objects accepted")
	}
	bad := append([]asn1tree.Value(nil), vals...)
	bad[2] = asn1tree.Gauge(80)
	if _, err := schema.HotsetTrap(2).Bind(testBase, bad...); err == nil || !strings.Contains(err.Error(), "hotsetThreshold") {
		t.Errorf("Gauge32 for hotsetThreshold: %v", err)
	}
}
