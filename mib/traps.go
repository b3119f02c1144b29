package mib

import (
	"regexp"
	"slices"
	"strconv"

	"github.com/perfagent/subagent/mib/schema"
	"github.com/perfagent/subagent/spmi"
)

// trapDescr is how a hotset instance's description starts when it sends
// notifications (hotset.Description): "trap 3: Disk/*/busy"; an alarm's
// instance of Agent/expr starts the same way when it has a trap number
// (derive.Engine.AgentStats).
var trapDescr = regexp.MustCompile(`^trap ([1-9][0-9]{0,4}): (.*)$`)

// TrapNumbers reads, from the hotset instances of a served tree, which
// trap numbers they send and which hotsets send each ("busydisks
// (Disk/*/busy)"): the running daemon's notifications.
func TrapNumbers(items []Item) map[uint32][]string {
	return trapUsers(items, isHotset)
}

// AlarmTrapNumbers is TrapNumbers for the alarms with a trap number of
// their own, read from their instances of Agent/expr.
func AlarmTrapNumbers(items []Item) map[uint32][]string {
	return trapUsers(items, isAlarmExpr)
}

func isHotset(it *Item) bool { return len(it.Rel) == 2 && it.Rel[0] == spmi.ASNHotset }

func isAlarmExpr(it *Item) bool {
	return len(it.Rel) == 3 && it.Rel[0] == spmi.ASNAgent && it.Rel[1] == spmi.ASNAgentExpr
}

func trapUsers(items []Item, is func(*Item) bool) map[uint32][]string {
	out := map[uint32][]string{}
	for i := range items {
		it := &items[i]
		if it.IsStat() || !it.Instance || !is(it) {
			continue
		}
		m := trapDescr.FindStringSubmatch(it.Descr)
		if m == nil {
			continue
		}
		n, err := strconv.ParseUint(m[1], 10, 32)
		if err != nil || n > schema.MaxTrapNo {
			continue
		}
		_, name := parentPath(it.Path)
		out[uint32(n)] = append(out[uint32(n)], name+" ("+m[2]+")")
	}
	return out
}

// notifications are the module's: the examples' and the tree's, by number.
func (m *model) notifications() []*schema.Notification {
	items := make([]Item, 0, 8)
	for _, n := range m.nodes {
		if isHotset(n.it) || isAlarmExpr(n.it) {
			items = append(items, *n.it)
		}
	}
	hot, alarm := TrapNumbers(items), AlarmTrapNumbers(items)
	nums := slices.Concat(schema.ExampleTrapNumbers, schema.ExampleAlarmTrapNumbers)
	for n := range hot {
		nums = append(nums, n)
	}
	for n := range alarm {
		nums = append(nums, n)
	}
	slices.Sort(nums)
	nums = slices.Compact(nums)
	out := make([]*schema.Notification, 0, len(nums))
	for _, n := range nums {
		// A number is one notification: the tree's users before the
		// examples', a hotset's before an alarm's (the daemon refuses an
		// alarm's number that anything else sends: schema.CheckTrapNumbers).
		h, a := hot[n], alarm[n]
		slices.Sort(h)
		slices.Sort(a)
		switch {
		case len(h) > 0:
			out = append(out, schema.HotsetTrap(n, h...))
		case len(a) > 0:
			out = append(out, schema.AlarmTrap(n, a...))
		case slices.Contains(schema.ExampleTrapNumbers, n):
			out = append(out, schema.HotsetTrap(n))
		default:
			out = append(out, schema.AlarmTrap(n))
		}
	}
	return append(out, schema.OwnNotifications()...)
}
