package schema

import (
	"fmt"
	"slices"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/spmi"
)

// The hotset notifications and the objects they carry. The hotset code
// sends them; the generator declares them, so the two cannot drift apart.
//
// A hotset (the guide's SpmiAddSetHot) watches one statistic across all
// peer instances of a context. When peers of a peer set cross the
// threshold (above it for a positive threshold, below its absolute value
// for a negative one), a notification base.0.<trap_no> is sent, at most
// once per frequency per peer set. Its VarBinds after sysUpTime.0 and
// snmpTrapOID.0 are the objects of its OBJECTS clause in that order, so
// that positional translators (SNMPTT's $1..$n) read them right, then the
// hot peer statistics' instances. Nothing in it is Counter64, so that
// SNMPv1 receivers and a master's v1 sinks get it too (RFC 3584 3.2).

// Arcs under the base.
// HotsetObjectsArc (base.14.0, spmi.ASNHotset then 0) holds the objects
// the notifications carry. Instances are numbered from 1; the Hotset
// context must not put a fixed context at 0 (Generate refuses a tree
// that does). The notifications themselves are base.0.N
// (spmi.ASNNotifications) so that they map to SNMPv1 traps (RFC 3584
// section 3: enterprise base, generic trap 6, specific trap N); base.100
// (spmi.ASNConformance) holds the groups and compliance statements.
const HotsetObjectsArc uint32 = 0

// NotifyObject is an object carried in notifications. It is not in the
// served tree (MAX-ACCESS accessible-for-notify); in a notification its
// instance is OID(base).0.
type NotifyObject struct {
	Name   string        // descriptor
	Arc    asn1tree.OID  // relative to the base
	Kind   asn1tree.Kind // the value's wire type
	Syntax string        // SMIv2 SYNTAX
	Units  string
	Descr  string
}

// OID is the object's full OID under base.
func (o *NotifyObject) OID(base asn1tree.OID) asn1tree.OID { return base.Append(o.Arc...) }

// Instance is the OID a notification's VarBind carries: OID(base).0.
func (o *NotifyObject) Instance(base asn1tree.OID) asn1tree.OID { return o.OID(base).Append(0) }

// Notification is one NOTIFICATION-TYPE.
type Notification struct {
	Name    string
	Arc     asn1tree.OID // relative to the base: spmi.ASNNotifications, N
	Descr   string
	Objects []*NotifyObject // in the order of the OBJECTS clause and the VarBinds
}

// OID is the notification's full OID under base (the value of snmpTrapOID.0).
func (n *Notification) OID(base asn1tree.OID) asn1tree.OID { return base.Append(n.Arc...) }

// Binding is one VarBind of a notification (the same fields as agentx.VarBind).
type Binding struct {
	OID   asn1tree.OID
	Value asn1tree.Value
}

// Bind pairs vals with the notification's objects, in order, checking
// their number and kinds.
func (n *Notification) Bind(base asn1tree.OID, vals ...asn1tree.Value) ([]Binding, error) {
	if len(vals) != len(n.Objects) {
		return nil, fmt.Errorf("mib: %s carries %d objects, got %d values", n.Name, len(n.Objects), len(vals))
	}
	out := make([]Binding, len(vals))
	for i, o := range n.Objects {
		if vals[i].Kind != o.Kind {
			return nil, fmt.Errorf("mib: %s: %s is %s, got %s", n.Name, o.Name, o.Kind, vals[i].Kind)
		}
		out[i] = Binding{OID: o.Instance(base), Value: vals[i]}
	}
	return out, nil
}

func hotsetObject(n uint32, name string, k asn1tree.Kind, syntax, descr string) *NotifyObject {
	return &NotifyObject{Name: name, Arc: asn1tree.OID{spmi.ASNHotset, HotsetObjectsArc, n}, Kind: k, Syntax: syntax, Descr: descr}
}

// The objects of the hotset notifications. Their numbers never change.
var (
	HotsetName = hotsetObject(1, "hotsetName", asn1tree.OctetString, "DisplayString",
		"The name of the hotset (its instance under hotset) that raised the notification.")
	HotsetPeerContext = hotsetObject(2, "hotsetPeerContext", asn1tree.OctetString, "DisplayString",
		"The path of the peer set's parent context, such as Disk/ or FS/rootvg/: the "+
			"statistics of the VarBinds after these objects are of its subcontexts.")
	HotsetThreshold = hotsetObject(3, "hotsetThreshold", asn1tree.Integer32, "Integer32",
		"The hotset's threshold: a rate per second for counters, a level in the statistic's "+
			"units for quantities. A positive threshold is crossed by values above it, a "+
			"negative one by values below its absolute value.")
	HotsetSeverity = hotsetObject(4, "hotsetSeverity", asn1tree.Integer32, "Integer32 (0..32767)",
		"The severity the hotset assigns to its exceptions; 0 when it raises notifications only.")
	HotsetPeerName = hotsetObject(5, "hotsetPeerName", asn1tree.OctetString, "DisplayString",
		"The name of the hottest peer of the peer set (such as sda): the one whose value "+
			"hotsetPeerValue carries.")
	// A decimal string, not a scaled integer: a rate per second of a
	// byte counter passes 2^31/100 (1 GbE is 1.25e8 bytes/s), levels can
	// be negative, and every manager prints a string as it is.
	HotsetPeerValue = hotsetObject(6, "hotsetPeerValue", asn1tree.OctetString, "DisplayString",
		"The value of the hottest peer that crossed the threshold, exactly as the hotset "+
			"compared it, in decimal with at most two decimal places (such as 93.5 or "+
			"1250000000): the rate per second of a counter since the previous evaluation, the "+
			"level of a quantity. Its units, which are also those of hotsetThreshold, are "+
			"hotsetValueUnits.")
	HotsetValueUnits = hotsetObject(7, "hotsetValueUnits", asn1tree.OctetString, "DisplayString",
		"The units of hotsetPeerValue and hotsetThreshold: the statistic's units, followed "+
			"by 'per second' for a counter (such as 'percent', 'KiB per second', 'per "+
			"second'); empty for a quantity without declared units.")
	HotsetPeerList = hotsetObject(8, "hotsetPeerList", asn1tree.OctetString, "DisplayString",
		"Every peer beyond the threshold sent in this notification, hottest first, with the "+
			"value it was compared with, as name=value separated by spaces (sda=93.5 "+
			"sdb=88); cut with ... at 255 octets.")
)

// HotsetSuppressed is last in both hotset notifications, so that the
// positions of the objects before it ($1..$8) stay as they were.
var HotsetSuppressed = hotsetObject(12, "hotsetSuppressed", asn1tree.Gauge32, "Unsigned32",
	"The notifications of this hotset (hotsetTrapN and hotsetCleared) that its rate limit "+
		"(hotset.notify_burst and notify_interval) held back since the previous one it sent; "+
		"0 when none was. Their crossings are in the hotset's exceptions and feed tables.")

var hotsetObjects = []*NotifyObject{HotsetName, HotsetPeerContext, HotsetThreshold, HotsetSeverity,
	HotsetPeerName, HotsetPeerValue, HotsetValueUnits, HotsetPeerList, HotsetSuppressed}

// The objects of the daemon's own notifications (alarms.go).
var (
	HotsetRearm = hotsetObject(9, "hotsetRearm", asn1tree.Integer32, "Integer32",
		"The hotset's falling (re-arm) threshold, in the units and with the sign of "+
			"hotsetThreshold: a peer that raised a notification raises the next only after its "+
			"value went back past it (RMON's alarmFallingThreshold).")
	TreeGeneration = hotsetObject(10, "treeGeneration", asn1tree.Gauge32, "Unsigned32",
		"The tree generation: it increases by one with each change of the served tree's "+
			"structure (contexts appearing or vanishing: the directory's generation), and never "+
			"goes back, not even across restarts. The last generation the notification covers.")
	TreeContexts = hotsetObject(11, "treeContexts", asn1tree.OctetString, "DisplayString",
		"The paths that appeared (+path) or vanished (-path) in the generations from "+
			"treeFirstGeneration to treeGeneration, oldest first, separated by spaces; a path "+
			"that came and went is named twice. Cut with ... at 255 octets: "+
			"treeChangeCount tells how many there are, and directoryChangeTable lists them.")
	TreeFirstGeneration = hotsetObject(13, "treeFirstGeneration", asn1tree.Gauge32, "Unsigned32",
		"The first generation the notification covers: every generation after the one the "+
			"previous tree changed notification ended with (treeGeneration) up to this one's "+
			"treeGeneration is covered, none skipped.")
	TreeChangeCount = hotsetObject(14, "treeChangeCount", asn1tree.Gauge32, "Unsigned32",
		"How many paths appeared or vanished in the generations the notification covers: "+
			"the entries of treeContexts when it is not cut.")
)

// The objects of the alarms' notifications (derive, docs/EXPRESSIONS.md),
// beside the others the daemon's own notifications carry.
var (
	AlarmName = hotsetObject(15, "alarmName", asn1tree.OctetString, "DisplayString",
		"The name of the alarm (alarms in the configuration) whose instance changed state.")
	AlarmInstance = hotsetObject(16, "alarmInstance", asn1tree.OctetString, "DisplayString",
		"The instance the alarm's wildcards matched (such as sda; several joined by /), "+
			"empty for an alarm of one value.")
	AlarmValue = hotsetObject(17, "alarmValue", asn1tree.OctetString, "DisplayString",
		"The expression's value at the evaluation that changed the state, in decimal: "+
			"1 or 0 for a condition, the value compared for an alarm with thresholds.")
	AlarmSeverity = hotsetObject(18, "alarmSeverity", asn1tree.Integer32, "Integer32 (0..32767)",
		"The severity the alarm was configured with.")
	AlarmCondition = hotsetObject(19, "alarmCondition", asn1tree.OctetString, "DisplayString",
		"The alarm's expression as configured, followed by its rising and falling "+
			"thresholds when it has them; cut with ... at 255 octets.")
)

var ownObjects = []*NotifyObject{HotsetRearm, TreeGeneration, TreeContexts, TreeFirstGeneration, TreeChangeCount,
	AlarmName, AlarmInstance, AlarmValue, AlarmSeverity, AlarmCondition}

// The numbers of the daemon's own notifications, base.0.N: above the
// hotsets' trap numbers (1..32767), so that no trap_no can take them.
const (
	HotsetClearedNo uint32 = 32768
	TreeChangedNo   uint32 = 32769
	AlarmRaisedNo   uint32 = 32770
	AlarmClearedNo  uint32 = 32771
)

var alarmObjects = []*NotifyObject{AlarmName, AlarmInstance, AlarmValue, AlarmSeverity, AlarmCondition}

// AlarmRaised is the notification of an alarm instance that went to
// firing; AlarmCleared of one that went back to inactive.
var (
	AlarmRaised = &Notification{Name: "alarmRaised", Arc: asn1tree.OID{spmi.ASNNotifications, AlarmRaisedNo}, Objects: alarmObjects,
		Descr: "An alarm's instance went to firing: its condition held for the alarm's for " +
			"evaluations (alarmTable shows it, state firing). In SNMPv1 this is enterprise-specific " +
			"trap 32770 of the module's enterprise."}
	AlarmCleared = &Notification{Name: "alarmCleared", Arc: asn1tree.OID{spmi.ASNNotifications, AlarmClearedNo}, Objects: alarmObjects,
		Descr: "A firing alarm's instance went back to inactive: its condition was false for the " +
			"alarm's keep evaluations. Sent by alarms configured with cleared. In SNMPv1 this is " +
			"enterprise-specific trap 32771 of the module's enterprise."}
)

// HotsetCleared is the notification of a peer that raised a hotset
// notification and went back past the hotset's falling threshold.
var HotsetCleared = &Notification{Name: "hotsetCleared", Arc: asn1tree.OID{spmi.ASNNotifications, HotsetClearedNo},
	Objects: []*NotifyObject{HotsetName, HotsetPeerContext, HotsetThreshold, HotsetRearm, HotsetSeverity,
		HotsetPeerName, HotsetPeerValue, HotsetValueUnits, HotsetSuppressed},
	Descr: "A peer that raised a hotset notification went back past the hotset's falling threshold " +
		"(hotsetRearm): the alarm is cleared, and the peer is armed again. Sent once per raised peer " +
		"by hotsets configured with cleared, within the hotset's rate limit. hotsetPeerName names the peer, hotsetPeerValue is its " +
		"compared value; its served statistic follows the objects, as in hotsetTrapN. In SNMPv1 " +
		"this is enterprise-specific trap 32768 of the module's enterprise."}

// TreeChanged is the notification of contexts that appeared or vanished.
var TreeChanged = &Notification{Name: "treeChanged", Arc: asn1tree.OID{spmi.ASNNotifications, TreeChangedNo},
	Objects: []*NotifyObject{TreeGeneration, TreeContexts, TreeFirstGeneration, TreeChangeCount},
	Descr: "Contexts appeared in or vanished from the served tree (a DDS supplier registered or " +
		"left, the first ARM application or the first hotset came): the directory tables changed. " +
		"Sent at most once per hotset.tree_changed_interval, covering every generation since the " +
		"previous one (treeFirstGeneration to treeGeneration) and naming the paths changed in " +
		"them (treeContexts, cut at 255 octets; treeChangeCount of them in all); " +
		"directoryChangeTable lists each with its generation. In SNMPv1 this is " +
		"enterprise-specific trap 32769 of the module's enterprise."}

// OwnNotifications are the daemon's own notifications, which every module declares.
func OwnNotifications() []*Notification {
	return []*Notification{HotsetCleared, TreeChanged, AlarmRaised, AlarmCleared, SLOBurnRaised, SLOBurnCleared}
}

// ExampleTrapNumbers are the trap numbers of the shipped example
// configuration (configs/subagent.yaml): every module declares them.
var ExampleTrapNumbers = []uint32{1, 2, 3}

// ExampleAlarmTrapNumbers are the trap numbers of the example
// configuration's alarms (alarmTrapN).
var ExampleAlarmTrapNumbers = []uint32{10}

// HotsetTrap is the notification of the hotsets with trap number n
// (base.0.n); users says which hotsets send it, when known.
func HotsetTrap(n uint32, users ...string) *Notification {
	d := fmt.Sprintf("Peers of a hotset with trap number %d crossed its threshold. Sent at most "+
		"once per the hotset's frequency for each peer set, and within the hotset's rate limit "+
		"(hotsetSuppressed counts those it held back). The VarBinds after snmpTrapOID.0 "+
		"are the objects listed here, in this order, then the hot peer statistics with their "+
		"served values, hottest first, up to the hotset's maxresp, each under the OID the "+
		"agent serves it: its table cell (such as diskQlen.3) when tables are served, its "+
		"scalar otherwise; one served as Counter64 (a counter, a 64-bit level) is left out, "+
		"since SNMPv1 cannot carry it, and its compared value is in hotsetPeerList. In SNMPv1 this is "+
		"enterprise-specific trap %d of the module's enterprise.", n, n)
	return numbered("hotsetTrap", n, hotsetObjects, d, users)
}

// Notifications lists the notifications every module declares: those of
// the example configuration. A module of a tree with hotsets and alarms
// declares theirs too (TrapNumbers).
func Notifications() []*Notification {
	out := make([]*Notification, 0, len(ExampleTrapNumbers)+len(ExampleAlarmTrapNumbers))
	for _, n := range ExampleTrapNumbers {
		out = append(out, HotsetTrap(n))
	}
	for _, n := range ExampleAlarmTrapNumbers {
		out = append(out, AlarmTrap(n))
	}
	return out
}

// NotifyObjects lists every object the notifications carry, by OID.
func NotifyObjects() []*NotifyObject {
	out := append(append(append([]*NotifyObject(nil), hotsetObjects...), ownObjects...), sloObjects...)
	slices.SortFunc(out, func(a, b *NotifyObject) int { return asn1tree.Compare(a.Arc, b.Arc) })
	return out
}
