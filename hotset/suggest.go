package hotset

import (
	"strings"

	"github.com/perfagent/subagent/spmi"
)

// hint is "; did you mean Disk/*/busy?" when a path near the hotset's
// matches statistics in snap, else "".
func hint(snap *spmi.Snapshot, d *Def) string {
	if s := Suggest(snap, d.GrandParent, d.Stat); s != "" {
		return "; did you mean " + s + "?"
	}
	return ""
}

// Suggest is the hotset path nearest to grandparent/*/stat that matches
// peers in snap, correcting a misspelled context or statistic name by
// edit distance ("Disk/*/busy" for Disk and bussy); "" when nothing is
// close enough to be a typing error.
func Suggest(snap *spmi.Snapshot, grandparent, stat string) string {
	n := snap.Top
	for _, part := range strings.Split(grandparent, "/") {
		c := n.Child(part)
		if c == nil || c.IsStat() {
			var names []string
			for _, k := range n.Children {
				if !k.IsStat() {
					names = append(names, k.Name)
				}
			}
			if c = n.Child(Nearest(part, names)); c == nil {
				return ""
			}
		}
		n = c
	}
	if len(peerGroups(n, stat)) == 0 {
		// The statistic names held by n's descendants (peers are below
		// its children), each once.
		seen := map[string]bool{}
		var names []string
		spmi.Walk(n, func(x *spmi.Node) bool {
			if x.IsStat() && x.Parent != n && !seen[x.Name] {
				seen[x.Name] = true
				names = append(names, x.Name)
			}
			return true
		})
		if stat = Nearest(stat, names); stat == "" || len(peerGroups(n, stat)) == 0 {
			return ""
		}
	}
	return strings.TrimSuffix(n.Path, "/") + "/*/" + stat
}

// Nearest is the candidate closest to name by edit distance, ignoring
// case, if close enough to be a typing error (as config's key hints).
func Nearest(name string, candidates []string) string {
	best, bestD := "", max(1, len(name)/3)+1
	for _, c := range candidates {
		if d := editDistance(strings.ToLower(name), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance counts insertions, deletions, substitutions and swaps of
// neighbours ("Dsik" is one from "Disk"): optimal string alignment.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
