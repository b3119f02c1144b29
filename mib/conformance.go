package mib

import (
	"fmt"
	"strings"

	"github.com/perfagent/subagent/asn1tree"
)

type addFunc func(name string, oid asn1tree.OID, macro, path, syn, text string)

// Arcs below ConformanceArc.
const (
	compliancesArc  = 1
	groupsArc       = 2 // context groups, numbered by their top-level ASN
	hotsetGroupsArc = 3
)

// conformance declares an OBJECT-GROUP per top-level context, the hotset
// groups and a MODULE-COMPLIANCE (RFC 2580).
func (m *model) conformance(add addFunc, self string) {
	conf, comps, groups, hot := m.prefix+"Conformance", m.prefix+"Compliances", m.prefix+"Groups", m.prefix+"HotsetGroups"
	base := m.base.Append(ConformanceArc)
	oidAssign := func(name, parent string, arc uint32, oid asn1tree.OID) {
		add(name, oid, "OBJECT IDENTIFIER", "", "", fmt.Sprintf("%s OBJECT IDENTIFIER ::= { %s %d }\n", name, parent, arc))
	}
	oidAssign(conf, self, ConformanceArc, base)
	oidAssign(comps, conf, compliancesArc, base.Append(compliancesArc))
	oidAssign(groups, conf, groupsArc, base.Append(groupsArc))
	oidAssign(hot, conf, hotsetGroupsArc, base.Append(hotsetGroupsArc))

	var mandatory []string
	for _, g := range m.groups {
		mandatory = append(mandatory, g.name)
		d := fmt.Sprintf("The statistics of the %s context as this module declares them.", g.top.it.Path)
		add(g.name, base.Append(groupsArc, g.arc), "OBJECT-GROUP", "", "",
			objectGroup(g.name, "OBJECTS", g.members, d, groups, g.arc))
	}
	var objs, notifs []string
	for _, o := range NotifyObjects() {
		objs = append(objs, o.Name)
	}
	for _, n := range m.notifications() {
		notifs = append(notifs, n.Name)
	}
	add("hotsetObjectsGroup", base.Append(hotsetGroupsArc, 1), "OBJECT-GROUP", "", "",
		objectGroup("hotsetObjectsGroup", "OBJECTS", objs, "The objects the hotset notifications carry.", hot, 1))
	add("hotsetNotificationsGroup", base.Append(hotsetGroupsArc, 2), "NOTIFICATION-GROUP", "", "",
		objectGroup("hotsetNotificationsGroup", "NOTIFICATIONS", notifs, "The hotset notifications.", hot, 2))

	name := m.prefix + "Compliance"
	var b strings.Builder
	fmt.Fprintf(&b, "%s MODULE-COMPLIANCE\n%sSTATUS      current\n%sDESCRIPTION\n%s\n%sMODULE      -- this module\n",
		name, ind, ind, quoted(ind+ind, "An agent serving the tree this module was written from. "+
			"Every context group it declares is served while its provider is enabled."), ind)
	if len(mandatory) > 0 {
		fmt.Fprintf(&b, "%sMANDATORY-GROUPS {\n%s\n%s}\n", ind+ind, wrapList(ind+ind+ind, mandatory, ", "), ind+ind)
	}
	for _, g := range []string{"hotsetObjectsGroup", "hotsetNotificationsGroup"} {
		fmt.Fprintf(&b, "%sGROUP       %s\n%sDESCRIPTION\n%s\n", ind+ind, g, ind+ind,
			quoted(ind+ind+ind, "Required of agents that send hotset notifications."))
	}
	fmt.Fprintf(&b, "%s::= { %s %d }\n", ind, comps, 1)
	add(name, base.Append(compliancesArc, 1), "MODULE-COMPLIANCE", "", "", b.String())
}

func objectGroup(name, clause string, members []string, descr, parent string, arc uint32) string {
	macro := "OBJECT-GROUP"
	if clause == "NOTIFICATIONS" {
		macro = "NOTIFICATION-GROUP"
	}
	return fmt.Sprintf("%s %s\n%s%s {\n%s\n%s}\n%sSTATUS      current\n%sDESCRIPTION\n%s\n%s::= { %s %d }\n",
		name, macro, ind, clause, wrapList(ind+ind, members, ", "), ind, ind, ind, quoted(ind+ind, descr), ind, parent, arc)
}
