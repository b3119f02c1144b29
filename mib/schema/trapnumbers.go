package schema

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/spmi"
)

// The trap numbers hotsets and alarms choose name notifications base.0.N:
// hotsetTrapN and alarmTrapN. One N is one NOTIFICATION-TYPE, so these
// rules are the only place that says who may send which N; the
// configuration, the control socket and every writable table check their
// hotsets and alarms with CheckTrapNumbers.

// MaxTrapNo is the highest trap number a hotset or an alarm may choose:
// the daemon's own notifications are numbered above it.
const MaxTrapNo = 32767

// TrapUser is a hotset or an alarm that sends notification base.0.N.
type TrapUser struct {
	N    int
	Kind string // "hotset" or "alarm"
	Name string
	From string // where it is defined: "alarms[2]", "alarmDefTable", ...
}

func (u TrapUser) String() string {
	s := fmt.Sprintf("%s %q", u.Kind, u.Name)
	if u.From != "" {
		s += " (" + u.From + ")"
	}
	return s
}

// OwnTrapNumbers are the specific trap numbers of the daemon's own
// notifications, which no hotset or alarm may take.
func OwnTrapNumbers() map[int]string {
	out := map[int]string{}
	for _, n := range OwnNotifications() {
		out[int(n.Arc[1])] = n.Name
	}
	return out
}

// CheckTrapNumbers refuses a number out of 1..MaxTrapNo or one of the
// daemon's own notifications, and an alarm's number that any other
// hotset or alarm sends too: alarmTrapN is one alarm's. Hotsets may share
// a number among themselves (hotsetTrapN names all of them). The error
// names both users.
func CheckTrapNumbers(users []TrapUser) error {
	own := OwnTrapNumbers()
	byN := map[int][]TrapUser{}
	for _, u := range users {
		if name, ok := own[u.N]; ok {
			return fmt.Errorf("%s: trap number %d is the daemon's own notification %s", u, u.N, name)
		}
		if u.N < 1 || u.N > MaxTrapNo {
			return fmt.Errorf("%s: trap number %d is not from 1 to %d", u, u.N, MaxTrapNo)
		}
		byN[u.N] = append(byN[u.N], u)
	}
	for _, n := range slices.Sorted(maps.Keys(byN)) {
		us := byN[n]
		i := slices.IndexFunc(us, func(u TrapUser) bool { return u.Kind == "alarm" })
		if i < 0 || len(us) == 1 {
			continue
		}
		other := us[0]
		if i == 0 {
			other = us[1]
		}
		return fmt.Errorf("trap number %d: %s and %s both send it: an alarm's trap number must be its own", n, us[i], other)
	}
	return nil
}

// AlarmTrap is the notification the alarms with trap number n send
// when an instance fires, instead of alarmRaised; users names them.
func AlarmTrap(n uint32, users ...string) *Notification {
	d := fmt.Sprintf("An instance of the alarm with trap number %d went to firing: sent instead of "+
		"alarmRaised, with the same objects in the same order (alarmTable shows it, state firing); "+
		"its clear is alarmCleared. In SNMPv1 this is enterprise-specific trap %d of the module's "+
		"enterprise.", n, n)
	return numbered("alarmTrap", n, alarmObjects, d, users)
}

// numbered is notification prefix+n, base.0.n, whose description names
// the users that send it, when known.
func numbered(prefix string, n uint32, objs []*NotifyObject, d string, users []string) *Notification {
	if len(users) > 0 {
		d += " Sent by: " + strings.Join(users, ", ") + "."
	}
	return &Notification{Name: fmt.Sprintf("%s%d", prefix, n), Arc: asn1tree.OID{spmi.ASNNotifications, n}, Objects: objs, Descr: d}
}
