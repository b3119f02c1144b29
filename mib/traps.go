package mib

import (
	"regexp"
	"slices"
	"strconv"

	"github.com/perfagent/subagent/mib/schema"
	"github.com/perfagent/subagent/spmi"
)

// trapDescr is how a hotset instance's description starts when it sends
// notifications (hotset.Description): "trap 3: Disk/*/busy".
var trapDescr = regexp.MustCompile(`^trap ([1-9][0-9]{0,4}): (.*)$`)

// TrapNumbers reads, from the hotset instances of a served tree, which
// trap numbers they send and which hotsets send each ("busydisks
// (Disk/*/busy)"): the running daemon's notifications.
func TrapNumbers(items []Item) map[uint32][]string {
	out := map[uint32][]string{}
	for i := range items {
		it := &items[i]
		if it.IsStat() || !it.Instance || len(it.Rel) != 2 || it.Rel[0] != spmi.ASNHotset {
			continue
		}
		m := trapDescr.FindStringSubmatch(it.Descr)
		if m == nil {
			continue
		}
		n, err := strconv.ParseUint(m[1], 10, 32)
		if err != nil || n > 32767 {
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
		if len(n.it.Rel) == 2 && n.it.Rel[0] == spmi.ASNHotset {
			items = append(items, *n.it)
		}
	}
	users := TrapNumbers(items)
	nums := slices.Clone(schema.ExampleTrapNumbers)
	for n := range users {
		nums = append(nums, n)
	}
	slices.Sort(nums)
	nums = slices.Compact(nums)
	out := make([]*schema.Notification, len(nums))
	for i, n := range nums {
		u := users[n]
		slices.Sort(u)
		out[i] = schema.HotsetTrap(n, u...)
	}
	return append(out, schema.OwnNotifications()...)
}
