package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/client/spmiwire"
)

// nearestHint follows a path that names nothing as far as it exists, then
// the nearest name at each level: "; nearest that exists: Disk/vda/busy
// (subagent peek Disk/ lists them)" for Disk/sda/busy on a host whose disk
// is vda. It is "" for other errors.
func nearestHint(ctx context.Context, r reader, it spmiwire.Item) string {
	if it.Err == nil || it.Err.Code != spmierr.SiNotFound {
		return ""
	}
	parts := strings.Split(strings.Trim(it.Path, "/"), "/")
	for k := len(parts) - 1; k >= 1; k-- {
		base := strings.Join(parts[:k], "/") + "/"
		entries, err := r.Peek(ctx, base)
		if err != nil {
			continue // not there either: one level up
		}
		return fmt.Sprintf("; nearest that exists: %s (subagent peek %s lists them)", nearestPath(entries, base, parts[k:]), base)
	}
	return "; subagent peek lists the contexts"
}

// nearestPath descends from the context base through entries (a peek of
// base), taking at each level the child nearest to the wanted name: a
// context while more names follow, a statistic for the last one when
// there is one.
func nearestPath(entries []spmiwire.Entry, base string, want []string) string {
	cur := base
	for i, w := range want {
		wantCtx := i < len(want)-1
		best, bestD := "", 0
		for _, e := range entries {
			name, isCtx, ok := childOf(cur, e.Path)
			if !ok {
				continue
			}
			d := editDistance(strings.ToLower(w), strings.ToLower(name))
			if isCtx != wantCtx {
				d += 1 << 20 // any child of the wanted kind is nearer
			}
			if best == "" || d < bestD {
				best, bestD = e.Path, d
			}
		}
		if best == "" {
			break
		}
		cur = best
		if !strings.HasSuffix(cur, "/") {
			break // a statistic: nothing below it
		}
	}
	return cur
}

// childOf tells whether path is a direct child of the context dir (which
// ends with /), with its name and whether it is a context.
func childOf(dir, path string) (name string, isCtx, ok bool) {
	rest, found := strings.CutPrefix(path, dir)
	name, isCtx = strings.CutSuffix(rest, "/")
	return name, isCtx, found && name != "" && !strings.Contains(name, "/")
}

// editDistance counts the insertions, deletions and substitutions that
// turn a into b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			sub := prev[j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, sub)
		}
		prev = cur
	}
	return prev[len(b)]
}
