package expr

import (
	"strings"

	"github.com/perfagent/subagent/hotset"
	"github.com/perfagent/subagent/spmi"
)

// suggestNodes bounds the contexts Suggest looks through per level.
const suggestNodes = 64

// Suggest is the path nearest to parts that matches statistics in snap,
// each misspelled name corrected by edit distance (hotset.Nearest):
// "Disk/*/busy" for Dsik/*/bussy; "" when nothing is close enough.
func Suggest(snap *spmi.Snapshot, parts []string) string {
	fixed := make([]string, len(parts))
	level := []*spmi.Node{snap.Top}
	for i, part := range parts {
		last := i == len(parts)-1
		fits := func(c *spmi.Node) bool { return c != nil && c.IsStat() == last }
		if part != "*" {
			var next []*spmi.Node
			for _, n := range level {
				if c := n.Child(part); fits(c) {
					next = append(next, c)
				}
			}
			if len(next) == 0 {
				var names []string
				seen := map[string]bool{}
				for _, n := range level {
					n.EachChild(func(c *spmi.Node) bool {
						if c.IsStat() == last && !seen[c.Name] {
							seen[c.Name] = true
							names = append(names, c.Name)
						}
						return true
					})
				}
				if part = hotset.Nearest(part, names); part == "" {
					return ""
				}
				for _, n := range level {
					if c := n.Child(part); fits(c) {
						next = append(next, c)
					}
				}
			}
			level = next
		} else {
			var next []*spmi.Node
			for _, n := range level {
				for _, c := range n.Children {
					if !c.IsStat() && len(next) < suggestNodes {
						next = append(next, c)
					}
				}
			}
			level = next
		}
		if len(level) > suggestNodes {
			level = level[:suggestNodes]
		}
		fixed[i] = part
	}
	var ms []match
	if resolve(snap.Top, fixed, nil, 0, &ms); len(ms) == 0 {
		return ""
	}
	return strings.Join(fixed, "/")
}
