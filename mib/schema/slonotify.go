package schema

import (
	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/spmi"
)

// SLOObjectsArc (base.19.0) holds the objects the SLO burn-rate
// notifications carry; the SLO context numbers its objectives from 1.
const SLOObjectsArc uint32 = 0

func sloObject(n uint32, name string, k asn1tree.Kind, syntax, units, descr string) *NotifyObject {
	return &NotifyObject{Name: name, Arc: asn1tree.OID{spmi.ASNSLO, SLOObjectsArc, n}, Kind: k, Syntax: syntax, Units: units, Descr: descr}
}

// The objects of the SLO notifications. Their numbers never change.
// Burn rates are decimal strings, as hotsetPeerValue: they pass any
// scaled integer's range in an outage.
var (
	SLOName = sloObject(1, "sloAlarmObjective", asn1tree.OctetString, "DisplayString", "",
		"The name of the objective (its instance under slo) whose alarm changed.")
	SLOSeverity = sloObject(2, "sloAlarmSeverity", asn1tree.OctetString, "DisplayString", "",
		"The alarm: page or ticket.")
	SLOFactor = sloObject(3, "sloAlarmFactor", asn1tree.OctetString, "DisplayString", "",
		"The burn rate both windows reach to raise the alarm, in decimal (such as 14.4).")
	SLOLongWindow = sloObject(4, "sloAlarmLongWindow", asn1tree.Gauge32, "Unsigned32", "",
		"The alarm's long window, in seconds.")
	SLOShortWindow = sloObject(5, "sloAlarmShortWindow", asn1tree.Gauge32, "Unsigned32", "",
		"The alarm's short window, in seconds.")
	SLOLongBurn = sloObject(6, "sloAlarmLongBurn", asn1tree.OctetString, "DisplayString", "",
		"The burn rate over the long window at the evaluation, in decimal with 3 decimal places: "+
			"the ratio of bad completions divided by the objective's allowed ratio (1 - target).")
	SLOShortBurn = sloObject(7, "sloAlarmShortBurn", asn1tree.OctetString, "DisplayString", "",
		"The burn rate over the short window at the evaluation, as sloAlarmLongBurn.")
)

var sloObjects = []*NotifyObject{SLOName, SLOSeverity, SLOFactor, SLOLongWindow, SLOShortWindow, SLOLongBurn, SLOShortBurn}

// The numbers of the SLO notifications, base.0.N.
const (
	SLOBurnRaisedNo  uint32 = 32772
	SLOBurnClearedNo uint32 = 32773
)

// SLOBurnRaised and SLOBurnCleared are an objective's burn-rate alarm
// raised and cleared.
var (
	SLOBurnRaised = &Notification{Name: "sloBurnRaised", Arc: asn1tree.OID{spmi.ASNNotifications, SLOBurnRaisedNo},
		Objects: sloObjects,
		Descr: "The burn rate of an objective's error budget reached the alarm's factor over both its " +
			"long and its short window (the SRE workbook's multi-window alert: page at 14.4 over 1 " +
			"hour and 5 minutes, ticket at 6 over 6 hours and 30 minutes, unless configured " +
			"otherwise). Sent once when raised; SLO/<name>/page or ticket reads 1 until cleared. In " +
			"SNMPv1 this is enterprise-specific trap 32772 of the module's enterprise."}
	SLOBurnCleared = &Notification{Name: "sloBurnCleared", Arc: asn1tree.OID{spmi.ASNNotifications, SLOBurnClearedNo},
		Objects: sloObjects,
		Descr: "An objective's burn-rate alarm raised before no longer holds: the burn rate over one " +
			"of its windows (the short one first, once the errors stop) fell below the factor. In " +
			"SNMPv1 this is enterprise-specific trap 32773 of the module's enterprise."}
)
