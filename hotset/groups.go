package hotset

import (
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/spmi"
)

// peerGroups finds the peer sets of stat below gp: every context whose
// subcontexts hold stat, at the lowest level where any does. For Disk
// that is Disk itself; for a grandparent with several levels of
// instances (FS/<vg>/<lv>, RTime/ARM/<app>/<tx>) it is each parent of the
// lowest level — the guide's pseudo-hotvals, found anew at each
// evaluation so that parents that appear later get their group.
func peerGroups(gp *spmi.Node, stat string) []group {
	var out []group
	var visit func(n *spmi.Node) bool
	visit = func(n *spmi.Node) bool {
		found := false
		for _, c := range n.Children {
			if !c.IsStat() && visit(c) {
				found = true
			}
		}
		if found {
			return true // a lower level holds the peers
		}
		var peers []*spmi.Node
		for _, c := range n.Children {
			if c.IsStat() || (n.Inst() != ddswire.SiNoInst && !c.Instance) {
				continue // an instantiable context's aggregate (CPU/total) is no peer
			}
			if s := c.Child(stat); s != nil && s.IsStat() {
				peers = append(peers, s)
			}
		}
		if len(peers) == 0 {
			return false
		}
		out = append(out, group{parent: n, stats: peers})
		return true
	}
	visit(gp)
	return out
}

type group struct {
	parent *spmi.Node
	stats  []*spmi.Node
}
