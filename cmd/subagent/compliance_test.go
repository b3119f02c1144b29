package main

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/internal/snmpdtest"
	"github.com/perfagent/subagent/mib"
	"github.com/perfagent/subagent/mib/mibtest"
	"github.com/perfagent/subagent/rtimelan"
)

// Each deployment meets its compliance in the shipped module: the daemon
// run that way, with every provider active (hotset over DDS, RTime/ARM,
// RTime/LAN where this user may ping), serves at least one instance of
// every object of every mandatory group, and nothing of the other front
// end's group.
func TestEachDeploymentMeetsItsCompliance(t *testing.T) {
	mibtest.Require(t, "snmpbulkwalk")
	shipped := readCompliances(t, "../../MIBs/"+mib.DefaultModule+".txt")
	ping := true
	if p, _, err := rtimelan.OpenPinger(nil); err != nil {
		ping = false
		t.Logf("RTime/LAN rows not covered: this user may open no ICMP socket (%v)", err)
	} else {
		p.Close()
	}
	for i, d := range mib.Deployments {
		t.Run(d.Name, func(t *testing.T) {
			name := "subagent" + d.Name + "Compliance"
			groups, ok := shipped.compliances[name]
			if !ok {
				t.Fatalf("the shipped module has no %s", name)
			}
			other := mib.Deployments[1-i]
			vars := walkDeployment(t, d, ping)
			walked := make([]string, len(vars))
			for j, v := range vars {
				walked[j] = v.OID
			}
			slices.Sort(walked)
			served := func(obj string) bool {
				oid, ok := shipped.oid(obj)
				if !ok {
					t.Fatalf("%s has no OID in the shipped module", obj)
				}
				j, _ := slices.BinarySearch(walked, oid+".")
				return j < len(walked) && strings.HasPrefix(walked[j], oid+".")
			}
			checked := 0
			for _, g := range groups {
				for _, obj := range shipped.groups[g] {
					if !ping && strings.HasPrefix(obj, "rTimeLAN") && !slices.Contains(scalarsOfRTimeLAN, obj) {
						continue // rows need ICMP
					}
					checked++
					if !served(obj) {
						t.Errorf("%s: %s of the mandatory %s is not served", d.Name, obj, g)
					}
				}
			}
			// The other front end's group is no part of this deployment.
			for _, obj := range shipped.groups[frontEndGroup(shipped, other)] {
				if served(obj) {
					t.Errorf("%s serves %s of the %s deployment", d.Name, obj, other.Name)
				}
			}
			t.Logf("%s: %d OIDs walked; %d objects of %d mandatory groups served", d.Name, len(vars), checked, len(groups))
		})
	}
}

// scalarsOfRTimeLAN are RTime/LAN's statistics of its own, served without ping.
var scalarsOfRTimeLAN = []string{"rTimeLANHosts", "rTimeLANCycles", "rTimeLANSkipped", "rTimeLANLate", "rTimeLANDuplicate", "rTimeLANForeign"}

// frontEndGroup is the group of a deployment's front end: the group whose
// objects lie under its context (agentSnmpGroup for Agent/snmp/).
func frontEndGroup(m *complianceModule, d mib.Deployment) string {
	for _, g := range m.compliances["subagent"+d.Name+"Compliance"] {
		if m.frontEnd[g] {
			return g
		}
	}
	return ""
}

// walkDeployment starts the daemon as deployment d serves the tree, with
// rows in every table, and walks the tree: standalone through --listen,
// AgentX through a real snmpd.
func walkDeployment(t *testing.T, d mib.Deployment, ping bool) []snmpdtest.Var {
	t.Helper()
	e := newEnv(t)
	// A hotset over nothing has an error, so that hotsetErrmsg has a value.
	conf := coverYAML + `  - name: nowhere
    stat: DDS/Nowhere/*/load
    threshold: 80
    frequency: 5m
    feed_type: always
`
	file := populatedConfig(t, conf, ping)
	var c *snmpdtest.Snmpd
	switch d.Name {
	case "Standalone":
		addr := fmt.Sprintf("127.0.0.1:%d", snmpdtest.FreeUDPPort(t))
		e.start("--config", file, "--listen", addr)
		c = snmpdtest.Target(t, addr, "public")
	case "AgentX":
		c = snmpdtest.Start(t, snmpdtest.Options{})
		e.start("--config", file, "--agentx", c.AgentXAddress)
		waitValue(t, e, "Agent/agentx/connected", "1", 30*time.Second)
	default:
		t.Fatalf("no way to start the %s deployment", d.Name)
	}

	populate(t, e, ping)
	vars, err := c.BulkWalk(base, 25)
	if err != nil {
		t.Fatalf("%s walk: %v", d.Name, err)
	}
	return vars
}

// complianceModule is what the test reads of a module: each definition's
// place, the groups' objects and the compliances' mandatory groups.
type complianceModule struct {
	parent      map[string]string // descriptor -> parent descriptor
	arc         map[string]string
	groups      map[string][]string
	compliances map[string][]string
	frontEnd    map[string]bool // the groups under prefixFrontEndGroups
}

var (
	defRE        = regexp.MustCompile(`(?m)^([a-z]\w*) (?:OBJECT-TYPE|OBJECT-IDENTITY|OBJECT IDENTIFIER|MODULE-IDENTITY|OBJECT-GROUP|NOTIFICATION-GROUP|NOTIFICATION-TYPE|MODULE-COMPLIANCE)\b`)
	assignRE     = regexp.MustCompile(`::= \{ (\w+) (\d+) \}`)
	groupRE      = regexp.MustCompile(`(?ms)^(\w+) OBJECT-GROUP\n\s+OBJECTS \{([^}]*)\}.*?::= \{ (\w+) \d+ \}`)
	complianceRE = regexp.MustCompile(`(?ms)^(\w+) MODULE-COMPLIANCE\n.*?MANDATORY-GROUPS \{([^}]*)\}`)
)

func readCompliances(t *testing.T, file string) *complianceModule {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	m := &complianceModule{parent: map[string]string{}, arc: map[string]string{}, groups: map[string][]string{},
		compliances: map[string][]string{}, frontEnd: map[string]bool{}}
	// A definition's place is the first assignment after its first line.
	for _, d := range defRE.FindAllStringSubmatchIndex(text, -1) {
		if a := assignRE.FindStringSubmatch(text[d[1]:]); a != nil {
			name := text[d[2]:d[3]]
			m.parent[name], m.arc[name] = a[1], a[2]
		}
	}
	list := func(s string) []string { return strings.Fields(strings.ReplaceAll(s, ",", " ")) }
	for _, d := range groupRE.FindAllStringSubmatch(text, -1) {
		m.groups[d[1]] = list(d[2])
		m.frontEnd[d[1]] = d[3] == "subagentFrontEndGroups"
	}
	for _, d := range complianceRE.FindAllStringSubmatch(text, -1) {
		m.compliances[d[1]] = list(d[2])
	}
	if len(m.groups) < 10 || len(m.compliances) < 2 {
		t.Fatalf("%s: %d groups, %d compliances read", file, len(m.groups), len(m.compliances))
	}
	return m
}

// oid is the numeric OID of a descriptor, through its parents up to the
// module identity (the base).
func (m *complianceModule) oid(name string) (string, bool) {
	var arcs []string
	for n := name; n != "subagentMIB"; n = m.parent[n] {
		a, ok := m.arc[n]
		if !ok {
			return "", false
		}
		if _, err := strconv.Atoi(a); err != nil {
			return "", false
		}
		arcs = append([]string{a}, arcs...)
	}
	return base + "." + strings.Join(arcs, "."), true
}
