package spmi

import (
	"sort"

	"github.com/perfagent/subagent/client/spmiwire"
)

// MaxRecordBytes bounds one record: a row of a few short columns.
const MaxRecordBytes = 1024

// SetRecord keeps rec (at most MaxRecordBytes) for name under parent,
// saved with the numbers; "" removes it. It tells whether that changed
// anything (the numbering must then be saved).
func (n *Numbering) SetRecord(parent, name, rec string) bool {
	if len(rec) > MaxRecordBytes {
		rec = rec[:MaxRecordBytes]
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.setRecordLocked(spmiwire.CleanPath(parent), name, rec)
}

func (n *Numbering) setRecordLocked(parent, name, rec string) bool {
	if n.recs == nil {
		n.recs = map[string]map[string]string{}
	}
	old, had := n.recs[parent][name]
	switch {
	case rec == "" && !had, had && old == rec:
		return false
	case rec == "":
		delete(n.recs[parent], name)
	default:
		if n.recs[parent] == nil {
			n.recs[parent] = map[string]string{}
		}
		n.recs[parent][name] = rec
		n.size += entryLen(name) + jsonLen(rec)
	}
	n.dirty = true
	return true
}

// Records returns the names under parent that have a record, sorted,
// and their records.
func (n *Numbering) Records(parent string) ([]string, map[string]string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := map[string]string{}
	names := []string{}
	for name, rec := range n.recs[spmiwire.CleanPath(parent)] {
		out[name] = rec
		names = append(names, name)
	}
	sort.Strings(names)
	return names, out
}
