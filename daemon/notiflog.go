package daemon

import (
	"github.com/perfagent/subagent/notiflog"
	"github.com/perfagent/subagent/spmi"
)

// notificationLogMIB serves the notification log as NOTIFICATION-LOG-MIB
// (mib-2 92), with the outcome table notifLogOutcomeTable at
// base.ASNNotifLogExt (SUBAGENT-MIB), for the SNMP front ends.
func (d *Daemon) notificationLogMIB() *notiflog.MIB {
	return &notiflog.MIB{L: d.hot.notes, Ext: d.cfg.Base.Append(spmi.ASNNotifLogExt)}
}
