package mib

import (
	"fmt"
	"slices"
	"strings"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/mib/schema"
	"github.com/perfagent/subagent/spmi"
)

type addFunc func(name string, oid asn1tree.OID, macro, path, syn, text string)

// Arcs below spmi.ASNConformance.
const (
	compliancesArc    = 1 // .1 the first compliance, .2 and .3 the deployments'
	groupsArc         = 2 // context groups, numbered by their top-level ASN
	hotsetGroupsArc   = 3
	frontEndGroupsArc = 4 // the front ends' groups (Deployment.GroupArc)
)

// Deployment is a way the daemon runs. Each serves the statistics of
// its own SNMP front end only (daemon/frontstats.go), so each has its own
// MODULE-COMPLIANCE, which an agent run that way can meet.
type Deployment struct {
	Name    string // in the compliance's descriptor: subagentStandaloneCompliance
	Context string // the front end's context, whose statistics form its group
	Descr   string
	// ComplianceArc and GroupArc number the compliance under
	// prefixCompliances and the front end's group under
	// prefixFrontEndGroups.
	ComplianceArc, GroupArc uint32
}

// Deployments are the daemon's two ways to serve the tree.
var Deployments = []Deployment{
	{Name: "Standalone", Context: "Agent/snmp/", ComplianceArc: 2, GroupArc: 1,
		Descr: "An agent serving the tree through the subagent's own SNMP responder (subagent run --listen)."},
	{Name: "AgentX", Context: "Agent/agentx/", ComplianceArc: 3, GroupArc: 2,
		Descr: "An agent serving the tree as an AgentX subagent of a master agent such as snmpd (subagent run --agentx)."},
}

// conformance declares an OBJECT-GROUP per top-level context and per front
// end, the hotset groups, and the MODULE-COMPLIANCEs (RFC 2580): one per
// Deployment, and the first one, deprecated, which made both front ends'
// statistics mandatory although no agent serves both.
func (m *model) conformance(add addFunc, self string) {
	conf, comps, groups, hot := m.prefix+"Conformance", m.prefix+"Compliances", m.prefix+"Groups", m.prefix+"HotsetGroups"
	fronts := m.prefix + "FrontEndGroups"
	base := m.base.Append(spmi.ASNConformance)
	oidAssign := func(name, parent string, arc uint32, oid asn1tree.OID) {
		add(name, oid, "OBJECT IDENTIFIER", "", "", fmt.Sprintf("%s OBJECT IDENTIFIER ::= { %s %d }\n", name, parent, arc))
	}
	oidAssign(conf, self, spmi.ASNConformance, base)
	oidAssign(comps, conf, compliancesArc, base.Append(compliancesArc))
	oidAssign(groups, conf, groupsArc, base.Append(groupsArc))
	oidAssign(hot, conf, hotsetGroupsArc, base.Append(hotsetGroupsArc))

	var common, all []string
	own := make([][]string, len(Deployments)) // each deployment's front-end groups
	hasFront := false
	for _, g := range m.groups {
		all = append(all, g.name)
		if g.deployment < 0 {
			common = append(common, g.name)
			d := fmt.Sprintf("The statistics of the %s context as this module declares them.", g.top.it.Path)
			add(g.name, base.Append(groupsArc, g.arc), "OBJECT-GROUP", "", "",
				objectGroup(g.name, "OBJECTS", g.members, d, groups, g.arc))
			continue
		}
		if !hasFront {
			oidAssign(fronts, conf, frontEndGroupsArc, base.Append(frontEndGroupsArc))
			hasFront = true
		}
		own[g.deployment] = append(own[g.deployment], g.name)
		d := fmt.Sprintf("The statistics of the %s context, served by the %s deployment only.", g.top.it.Path, Deployments[g.deployment].Name)
		add(g.name, base.Append(frontEndGroupsArc, g.arc), "OBJECT-GROUP", "", "",
			objectGroup(g.name, "OBJECTS", g.members, d, fronts, g.arc))
	}
	var objs, notifs []string
	for _, o := range schema.NotifyObjects() {
		objs = append(objs, o.Name)
	}
	for _, n := range m.notifications() {
		notifs = append(notifs, n.Name)
	}
	add("hotsetObjectsGroup", base.Append(hotsetGroupsArc, 1), "OBJECT-GROUP", "", "",
		objectGroup("hotsetObjectsGroup", "OBJECTS", objs, "The objects the hotset notifications carry.", hot, 1))
	add("hotsetNotificationsGroup", base.Append(hotsetGroupsArc, 2), "NOTIFICATION-GROUP", "", "",
		objectGroup("hotsetNotificationsGroup", "NOTIFICATIONS", notifs, "The hotset notifications.", hot, 2))

	m.outcomeConformance(add, hot, base)
	m.writableConformance(add, conf, comps, base)

	compliance := func(name, status, descr string, arc uint32, mandatory []string) {
		var b strings.Builder
		fmt.Fprintf(&b, "%s MODULE-COMPLIANCE\n%sSTATUS      %s\n%sDESCRIPTION\n%s\n%sMODULE      -- this module\n",
			name, ind, status, ind, quoted(ind+ind, descr), ind)
		if len(mandatory) > 0 {
			fmt.Fprintf(&b, "%sMANDATORY-GROUPS {\n%s\n%s}\n", ind+ind, wrapList(ind+ind+ind, mandatory, ", "), ind+ind)
		}
		groups := []string{"hotsetObjectsGroup", "hotsetNotificationsGroup"}
		if status == "current" {
			groups = append(groups, outcomeGroup)
		}
		for _, g := range groups {
			fmt.Fprintf(&b, "%sGROUP       %s\n%sDESCRIPTION\n%s\n", ind+ind, g, ind+ind,
				quoted(ind+ind+ind, "Required of agents that send hotset notifications."))
		}
		fmt.Fprintf(&b, "%s::= { %s %d }\n", ind, comps, arc)
		add(name, base.Append(compliancesArc, arc), "MODULE-COMPLIANCE", "", "", b.String())
	}
	var names []string
	for _, d := range Deployments {
		names = append(names, m.prefix+d.Name+"Compliance")
	}
	compliance(m.prefix+"Compliance", "deprecated", "An agent serving the tree this module was written from, with "+
		"both front ends' groups, which no agent serves together: replaced by "+strings.Join(names, " and ")+".", 1, all)
	for i, d := range Deployments {
		compliance(names[i], "current", d.Descr+" Every context group is served while its provider is enabled.",
			d.ComplianceArc, append(slices.Clone(common), own[i]...))
	}
}

func objectGroup(name, clause string, members []string, descr, parent string, arc uint32) string {
	macro := "OBJECT-GROUP"
	if clause == "NOTIFICATIONS" {
		macro = "NOTIFICATION-GROUP"
	}
	return fmt.Sprintf("%s %s\n%s%s {\n%s\n%s}\n%sSTATUS      current\n%sDESCRIPTION\n%s\n%s::= { %s %d }\n",
		name, macro, ind, clause, wrapList(ind+ind, members, ", "), ind, ind, ind, quoted(ind+ind, descr), ind, parent, arc)
}
