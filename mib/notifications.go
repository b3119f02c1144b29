package mib

import (
	"fmt"

	"github.com/perfagent/subagent/asn1tree"
)

// The hotset notifications and the objects they carry. The hotset code
// sends them; the generator declares them, so the two cannot drift apart.
//
// A hotset (the guide's SpmiAddSetHot) watches one statistic across all
// peer instances of a context. When a peer crosses the threshold (above it
// for a positive threshold, below its absolute value for a negative one)
// hotsetExceeded is sent, at most once per frequency minutes per peer set;
// hotsetCleared follows when that peer is back on the quiet side.

// Arcs under the base.
const (
	// NotificationsArc is base.0: notifications live at base.0.N so that
	// they map to SNMPv1 traps (RFC 3584 section 3).
	NotificationsArc uint32 = 0
	// HotsetArc is the Hotset top-level context (base.14).
	HotsetArc uint32 = 14
	// HotsetObjectsArc (base.14.0) holds the objects the notifications
	// carry. Instances are numbered from 1; the Hotset context must not
	// put a fixed context at 0 (Generate refuses a tree that does).
	HotsetObjectsArc uint32 = 0
	// ConformanceArc (base.100) holds the groups and the compliance
	// statement; no top-level context may use it.
	ConformanceArc uint32 = 100
)

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
	Arc     asn1tree.OID // relative to the base: NotificationsArc, N
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
// their number and kinds. The result follows snmpTrapOID.0 in a notification.
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

func hotsetObject(n uint32, name string, k asn1tree.Kind, syntax, units, descr string) *NotifyObject {
	return &NotifyObject{Name: name, Arc: asn1tree.OID{HotsetArc, HotsetObjectsArc, n}, Kind: k, Syntax: syntax, Units: units, Descr: descr}
}

// The objects of the hotset notifications. Their numbers never change.
var (
	HotsetName = hotsetObject(1, "hotsetName", asn1tree.OctetString, "DisplayString", "",
		"The name of the hotset that watched the statistic.")
	HotsetPeerPath = hotsetObject(2, "hotsetPeerPath", asn1tree.OctetString, "DisplayString", "",
		"The path of the peer statistic that crossed the threshold, such as Disk/sda/busy.")
	HotsetStatOID = hotsetObject(3, "hotsetStatOID", asn1tree.ObjectIdentifier, "OBJECT IDENTIFIER", "",
		"The OID of the peer statistic's instance (ending in .0), for polling it.")
	HotsetValue = hotsetObject(4, "hotsetValue", asn1tree.Integer32, "Integer32", "",
		"The value that was compared with the threshold, in the statistic's own scale "+
			"(times 10 to the power of its decimal places); for a counter its rate per second. "+
			"Values beyond the Integer32 range are clamped to it.")
	HotsetThreshold = hotsetObject(5, "hotsetThreshold", asn1tree.Integer32, "Integer32", "",
		"The hotset's threshold, in the same scale as hotsetValue. A positive threshold is "+
			"crossed by values above it, a negative one by values below its absolute value.")
	HotsetSeverity = hotsetObject(6, "hotsetSeverity", asn1tree.Integer32, "Integer32 (0..32767)", "",
		"The severity the hotset assigns to its exceptions; 0 when it sends notifications only.")
	HotsetTrapNumber = hotsetObject(7, "hotsetTrapNumber", asn1tree.Integer32, "Integer32 (1..32767)", "",
		"The trap number the hotset was defined with, which tells the manager's rules apart.")
)

var hotsetObjects = []*NotifyObject{HotsetName, HotsetPeerPath, HotsetStatOID, HotsetValue, HotsetThreshold, HotsetSeverity, HotsetTrapNumber}

// The hotset notifications.
var (
	HotsetExceeded = &Notification{
		Name: "hotsetExceeded", Arc: asn1tree.OID{NotificationsArc, 1}, Objects: hotsetObjects,
		Descr: "A peer statistic watched by a hotset crossed the threshold. Sent at most once " +
			"per the hotset's frequency (in minutes) for each peer set.",
	}
	HotsetCleared = &Notification{
		Name: "hotsetCleared", Arc: asn1tree.OID{NotificationsArc, 2}, Objects: hotsetObjects,
		Descr: "A peer statistic that had crossed a hotset's threshold is back on the quiet " +
			"side of it; hotsetValue is the value that showed it.",
	}
)

// Notifications lists every notification the module declares, by OID.
func Notifications() []*Notification { return []*Notification{HotsetExceeded, HotsetCleared} }

// NotifyObjects lists every object the notifications carry, by OID.
func NotifyObjects() []*NotifyObject { return append([]*NotifyObject(nil), hotsetObjects...) }
