package mib_test

import (
	"strings"
	"testing"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/mib"
	"github.com/perfagent/subagent/mib/schema"
)

// The module declares every notification with its objects, and every
// object as accessible-for-notify under the Hotset arc; a tree with
// hotsets that send trap numbers gets their notifications too.
func TestModuleDeclaresTheNotifications(t *testing.T) {
	tree := treeOf(t, "Mem/ 2", "Mem/free 2.1", "Hotset/ 14")
	tree.Items[2].Inst = ddswire.SiCfgInst
	tree.Items = append(tree.Items,
		mib.Item{Path: "Hotset/busydisks/", Descr: "trap 12: Disk/*/busy", Rel: asn1tree.OID{14, 1}, Instance: true},
		mib.Item{Path: "Hotset/topcpu/", Descr: "Proc/pid/*/usercpu", Rel: asn1tree.OID{14, 2}, Instance: true})
	if got := mib.TrapNumbers(tree.Items); len(got) != 1 || got[12][0] != "busydisks (Disk/*/busy)" {
		t.Errorf("TrapNumbers: %v", got)
	}
	m := generate(t, tree, mib.Options{})
	text := flat(m.Text)
	notifs := append(append(schema.Notifications(), schema.HotsetTrap(12)), schema.OwnNotifications()...)
	for _, n := range notifs {
		var names []string
		for _, o := range n.Objects {
			names = append(names, o.Name)
		}
		if want := n.Name + " NOTIFICATION-TYPE OBJECTS { " + strings.Join(names, ", ") + " }"; !strings.Contains(text, want) {
			t.Errorf("module lacks %q", want)
		}
	}
	if !strings.Contains(text, "Sent by: busydisks (Disk/*/busy).") || strings.Contains(text, "hotsetTrap0") {
		t.Errorf("hotsetTrap12 does not name its hotset")
	}
	for _, o := range schema.NotifyObjects() {
		want := o.Name + " OBJECT-TYPE SYNTAX " + o.Syntax + " MAX-ACCESS accessible-for-notify"
		if !strings.Contains(text, want) {
			t.Errorf("module lacks %q", want)
		}
	}
	for _, g := range []string{"hotsetObjectsGroup OBJECT-GROUP", "hotsetNotificationsGroup NOTIFICATION-GROUP", "hotsetTrap12, hotsetCleared, treeChanged, alarmRaised, alarmCleared, sloBurnRaised, sloBurnCleared }"} {
		if !strings.Contains(text, g) {
			t.Errorf("module lacks %q", g)
		}
	}
}

// An alarm with a trap number of its own (its Agent/expr instance's
// description starts "trap N: ", as a hotset's does) gets alarmTrapN,
// with alarmRaised's objects, naming it; alarms without one add nothing.
func TestModuleDeclaresAlarmTraps(t *testing.T) {
	tree := treeOf(t, "Mem/ 2", "Mem/free 2.1", "Agent/ 12", "Agent/expr/ 12.38")
	tree.Items = append(tree.Items,
		mib.Item{Path: "Agent/expr/diskfull/", Descr: "trap 21: max(FS/*/%used) > 95", Rel: asn1tree.OID{12, 38, 1}, Instance: true},
		mib.Item{Path: "Agent/expr/memlow/", Descr: "Mem/free < 10", Rel: asn1tree.OID{12, 38, 2}, Instance: true})
	if got := mib.AlarmTrapNumbers(tree.Items); len(got) != 1 || len(got[21]) != 1 || got[21][0] != "diskfull (max(FS/*/%used) > 95)" {
		t.Errorf("AlarmTrapNumbers: %v", got)
	}
	if got := mib.TrapNumbers(tree.Items); len(got) != 0 {
		t.Errorf("TrapNumbers (the hotsets') took alarms: %v", got)
	}
	text := flat(generate(t, tree, mib.Options{}).Text)
	var names []string
	for _, o := range schema.AlarmRaised.Objects {
		names = append(names, o.Name)
	}
	for _, want := range []string{"alarmTrap21 NOTIFICATION-TYPE OBJECTS { " + strings.Join(names, ", ") + " }",
		"Sent by: diskfull (max(FS/*/%used) > 95).", "alarmTrap10, alarmTrap21,"} {
		if !strings.Contains(text, want) {
			t.Errorf("module lacks %q", want)
		}
	}
	if !strings.Contains(text, "::= { subagentNotifications 21 }") {
		t.Errorf("alarmTrap21 is not base.0.21")
	}
}
