package spmi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/client/trustdir"
)

// DefaultMaxNames is the number of names a context may number when the
// configuration does not say (state.max_names_per_context).
const DefaultMaxNames = 100000

// ErrNumberingFull is wrapped by the error of an assignment refused
// because a limit of the numbering is reached.
var ErrNumberingFull = errors.New("instance numbering full")

// maxFileBytes bounds the saved file below what trustdir.ReadFile reads
// back: a numbering the daemon could not load at its next start would
// cost every number. A variable for tests.
var maxFileBytes = trustdir.MaxFileSize - trustdir.MaxFileSize/16

// Numbering keeps every persisted ASN.1 number of the daemon: instances
// whose number no rule gives (disks, file systems, swap devices, ARM
// applications, hotsets), ARM transactions, RTime/LAN hosts. Numbers are
// kept by the path of the context whose children they number, and saved
// so that the OIDs a manager knows stay valid across restarts. A name
// whose object is gone keeps its number for a grace period, then is
// released (release.go); until then no other name gets its number.
//
// Names may carry marks (RTime/LAN marks the hosts created by
// reference), saved with the numbers.
type Numbering struct {
	saveMu sync.Mutex // serializes writers, so a later state is written last
	mu     sync.Mutex
	file   string
	m      map[string]*numbered
	marks  map[string]map[string]map[string]bool // parent -> mark -> names
	recs   map[string]map[string]string          // parent -> name -> record
	max    int                                   // names per context
	size   int                                   // the saved file's bytes, estimated from above
	dirty  bool

	// The life cycle of names (release.go): names not seen in the tree
	// since gone's time are released once grace has passed.
	grace time.Duration
	gone  map[string]map[string]int64 // parent -> name -> unix seconds, last seen
	swept time.Time                   // the last Sweep

	// write is trustdir.WriteFile: file and directory synced (a seam for tests).
	write func(path string, data []byte, perm os.FileMode) error
}

// numbered is the numbering of one context's children.
type numbered struct {
	names map[string]uint32
	used  map[uint32]string
	floor uint32 // every number below floor is a name's: assignments start there
}

// numberingFile is the saved form. Version 1 (contexts only) is read for
// files of older daemons; version 2 adds the marks.
type numberingFile struct {
	Version  int                            `json:"version"`
	Contexts map[string]map[string]uint32   `json:"contexts"`
	Marks    map[string]map[string][]string `json:"marks,omitempty"`
	// Records keep a short text per name (rows managers created over
	// SNMP, records.go); version 2 readers of older daemons ignore them.
	Records map[string]map[string]string `json:"records,omitempty"`
	// Gone holds, for the names in their grace period, when they were
	// last seen (unix seconds): a restart does not start their grace
	// again. Older daemons ignore it.
	Gone map[string]map[string]int64 `json:"gone,omitempty"`
}

// NewNumbering returns an empty numbering saved to file ("" keeps it in memory).
func NewNumbering(file string) *Numbering {
	return &Numbering{file: file, m: map[string]*numbered{}, marks: map[string]map[string]map[string]bool{},
		max: DefaultMaxNames, write: trustdir.WriteFile, grace: DefaultNameGrace, gone: map[string]map[string]int64{}}
}

// LoadNumbering reads the numbering saved in file (version 1 or 2); a
// missing file is an empty numbering, a damaged one an error naming the
// file. Loading never writes.
func LoadNumbering(file string) (*Numbering, error) {
	n := NewNumbering(file)
	b, err := trustdir.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return n, nil
	}
	if err != nil {
		return nil, fmt.Errorf("instance numbering %s: %w", file, err)
	}
	var f numberingFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("instance numbering %s is damaged (%v); move it away to start a new numbering", file, err)
	}
	if f.Version != 1 && f.Version != 2 {
		return nil, fmt.Errorf("instance numbering %s: version %d, this daemon reads versions 1 and 2", file, f.Version)
	}
	for parent, names := range f.Contexts {
		for name, k := range names {
			if err := n.put(parent, name, k); err != nil {
				return nil, fmt.Errorf("instance numbering %s: %w", file, err)
			}
		}
	}
	for parent, marks := range f.Marks {
		for mark, names := range marks {
			for _, name := range names {
				n.markLocked(spmiwire.CleanPath(parent), mark, name, true)
			}
		}
	}
	for parent, recs := range f.Records {
		for name, rec := range recs {
			n.setRecordLocked(spmiwire.CleanPath(parent), name, rec)
		}
	}
	for parent, names := range f.Gone {
		for name, at := range names {
			n.goneLocked(spmiwire.CleanPath(parent), name, at)
		}
	}
	n.dirty = false
	return n, nil
}

// File is the file the numbering is saved to ("" for none).
func (n *Numbering) File() string { return n.file }

// SetMaxNames sets how many names one context may number (at least 1).
// Names already numbered keep their numbers when there are more.
func (n *Numbering) SetMaxNames(limit int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.max = max(limit, 1)
}

func (n *Numbering) context(parent string) *numbered {
	c := n.m[parent]
	if c == nil {
		c = &numbered{names: map[string]uint32{}, used: map[uint32]string{}, floor: 1}
		n.m[parent] = c
		n.size += jsonLen(parent) + 16
	}
	return c
}

// put records name's number k, checking that no other name has it.
func (n *Numbering) put(parent, name string, k uint32) error {
	parent = spmiwire.CleanPath(parent)
	if k == 0 {
		return fmt.Errorf("%s/%s has number 0", parent, name)
	}
	c := n.context(parent)
	if o, ok := c.names[name]; ok {
		if o != k {
			return fmt.Errorf("%s/%s has numbers %d and %d", parent, name, o, k)
		}
		return nil
	}
	if o, dup := c.used[k]; dup {
		return fmt.Errorf("%s/%s and %s/%s share number %d", parent, name, parent, o, k)
	}
	c.names[name], c.used[k] = k, name
	for c.used[c.floor] != "" {
		c.floor++
	}
	n.size += entryLen(name)
	n.dirty = true
	return nil
}

// Put records that name under parent has number k: the migration of an
// older state file. An error says that another name has k, or name
// another number.
func (n *Numbering) Put(parent, name string, k uint32) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.put(parent, name, k)
}

// Assign returns the number of instance name under parent, giving it the
// lowest number that no other name of that parent has (names released
// after their grace period, release.go, free theirs) and that taken does
// not report as used. A new name is refused (ErrNumberingFull) when
// the parent numbers as many names as SetMaxNames allows, or when the
// saved file would grow beyond what can be read back.
func (n *Numbering) Assign(parent, name string, taken func(uint32) bool) (uint32, error) {
	parent = spmiwire.CleanPath(parent)
	n.mu.Lock()
	defer n.mu.Unlock()
	k, _, err := n.assignLocked(parent, name, taken)
	return k, err
}

// assignLocked is Assign; fresh tells a name numbered now.
func (n *Numbering) assignLocked(parent, name string, taken func(uint32) bool) (k uint32, fresh bool, err error) {
	if k, ok := n.m[parent].lookup(name); ok {
		n.seenLocked(parent, name) // back within its grace period: same number
		return k, false, nil
	}
	if err := n.roomLocked(parent, name); err != nil {
		return 0, false, err
	}
	c := n.context(parent)
	k = c.floor
	for c.used[k] != "" || (taken != nil && taken(k)) {
		k++
	}
	if err := n.put(parent, name, k); err != nil {
		return 0, false, err // not reached: k is free
	}
	return k, true, nil
}

func (c *numbered) lookup(name string) (uint32, bool) {
	if c == nil {
		return 0, false
	}
	k, ok := c.names[name]
	return k, ok
}

func (n *Numbering) roomLocked(parent, name string) error {
	if c := n.m[parent]; c != nil && len(c.names) >= n.max {
		return fmt.Errorf("%w: cannot number %s/%s: %s has %d names with numbers, the limit (state.max_names_per_context); names whose objects are gone are released after state.name_grace",
			ErrNumberingFull, parent, name, parent, len(c.names))
	}
	if n.size+entryLen(name)+jsonLen(parent)+16 > maxFileBytes {
		return fmt.Errorf("%w: cannot number %s/%s: %s would grow beyond the %d bytes a state file may have",
			ErrNumberingFull, parent, name, n.fileName(), trustdir.MaxFileSize)
	}
	return nil
}

// Lookup returns the number of a name, if it has one; it never assigns.
func (n *Numbering) Lookup(parent, name string) (uint32, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.m[spmiwire.CleanPath(parent)].lookup(name)
}

// Names returns a copy of the numbers of parent's children.
func (n *Numbering) Names(parent string) map[string]uint32 {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := map[string]uint32{}
	if c := n.m[spmiwire.CleanPath(parent)]; c != nil {
		for name, k := range c.names {
			out[name] = k
		}
	}
	return out
}

// Mark sets or clears a mark of name under parent; it tells whether that
// changed anything (the numbering must then be saved).
func (n *Numbering) Mark(parent, mark, name string, on bool) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.markLocked(spmiwire.CleanPath(parent), mark, name, on)
}

func (n *Numbering) markLocked(parent, mark, name string, on bool) bool {
	set := n.marks[parent][mark]
	if set[name] == on {
		return false
	}
	if on {
		if n.marks[parent] == nil {
			n.marks[parent] = map[string]map[string]bool{}
		}
		if set == nil {
			set = map[string]bool{}
			n.marks[parent][mark] = set
		}
		set[name] = true
		n.size += entryLen(name)
	} else {
		delete(set, name)
	}
	n.dirty = true
	return true
}

// Marked lists the names of parent that carry mark, sorted.
func (n *Numbering) Marked(parent, mark string) []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := []string{}
	for name := range n.marks[spmiwire.CleanPath(parent)][mark] {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// IsMarked tells whether name under parent carries mark.
func (n *Numbering) IsMarked(parent, mark, name string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.marks[spmiwire.CleanPath(parent)][mark][name]
}

// Merge adds every number and mark of from, the numbering of an older
// state file. A name numbered differently in both, or a number given to
// different names, is an error naming both files, and nothing is merged:
// renumbering either would break OIDs a manager knows.
func (n *Numbering) Merge(from *Numbering) error {
	if n == from {
		return nil
	}
	from.mu.Lock()
	defer from.mu.Unlock()
	n.mu.Lock()
	defer n.mu.Unlock()
	var conflicts []error
	for _, parent := range sortedKeys(from.m) {
		mine := n.m[parent]
		if mine == nil {
			continue
		}
		for _, name := range sortedKeys(from.m[parent].names) {
			k := from.m[parent].names[name]
			if o, ok := mine.names[name]; ok && o != k {
				conflicts = append(conflicts, fmt.Errorf("%s/%s is %d in %s and %d in %s", parent, name, o, n.fileName(), k, from.fileName()))
			} else if o, ok := mine.used[k]; ok && o != name {
				conflicts = append(conflicts, fmt.Errorf("number %d of %s is %s in %s and %s in %s", k, parent, o, n.fileName(), name, from.fileName()))
			}
		}
	}
	if len(conflicts) > 0 {
		return fmt.Errorf("instance numbering: %s and %s number some names differently; keep the file whose numbers managers know and move the other away:\n%w",
			n.fileName(), from.fileName(), errors.Join(conflicts...))
	}
	for parent, c := range from.m {
		for name, k := range c.names {
			n.put(parent, name, k) // checked above
		}
	}
	for parent, marks := range from.marks {
		for mark, names := range marks {
			for name := range names {
				n.markLocked(parent, mark, name, true)
			}
		}
	}
	n.dirty = true // written even when from added nothing: the merge is then durable
	return nil
}

func (n *Numbering) fileName() string {
	if n.file == "" {
		return "the numbering in memory"
	}
	return n.file
}

// Save writes the numbering when it changed, atomically and durably:
// trustdir.WriteFile syncs the file before renaming it over the old one,
// then the directory. Callers save once per batch of assignments (the
// hierarchy after each refresh), not once per name.
func (n *Numbering) Save() error {
	n.saveMu.Lock()
	defer n.saveMu.Unlock()
	n.mu.Lock()
	if !n.dirty || n.file == "" {
		n.mu.Unlock()
		return nil
	}
	b, err := n.encodeLocked()
	if err == nil {
		n.size = len(b) // records replaced or removed, marks cleared, names released
	}
	n.dirty = false
	n.mu.Unlock()
	if err == nil {
		// The daemon checked the state directory (trustdir.Prepare); a missing
		// one is made private. WriteFile never follows a link planted in it.
		if err = os.MkdirAll(filepath.Dir(n.file), 0o700); err == nil {
			err = n.write(n.file, b, 0o600)
		}
	}
	if err != nil {
		n.mu.Lock()
		n.dirty = true // the next Save tries again
		n.mu.Unlock()
		return fmt.Errorf("instance numbering: %w", err)
	}
	return nil
}

func (n *Numbering) encodeLocked() ([]byte, error) {
	f := numberingFile{Version: 2, Contexts: map[string]map[string]uint32{}}
	for parent, c := range n.m {
		if len(c.names) > 0 {
			f.Contexts[parent] = c.names
		}
	}
	for parent, marks := range n.marks {
		for mark, names := range marks {
			if len(names) == 0 {
				continue
			}
			if f.Marks == nil {
				f.Marks = map[string]map[string][]string{}
			}
			if f.Marks[parent] == nil {
				f.Marks[parent] = map[string][]string{}
			}
			f.Marks[parent][mark] = sortedKeys(names)
		}
	}
	for parent, recs := range n.recs {
		if len(recs) == 0 {
			continue
		}
		if f.Records == nil {
			f.Records = map[string]map[string]string{}
		}
		f.Records[parent] = recs
	}
	for parent, names := range n.gone {
		if len(names) == 0 {
			continue
		}
		if f.Gone == nil {
			f.Gone = map[string]map[string]int64{}
		}
		f.Gone[parent] = names
	}
	var buf bytes.Buffer
	e := json.NewEncoder(&buf)
	e.SetEscapeHTML(false)
	e.SetIndent("", "  ")
	err := e.Encode(f)
	return buf.Bytes(), err
}

// Parents lists the contexts that have assignments, sorted.
func (n *Numbering) Parents() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []string
	for p, c := range n.m {
		if len(c.names) > 0 {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// Detached returns a copy of the numbering that is never saved, for readers
// that must not write the daemon's state.
func (n *Numbering) Detached() *Numbering {
	n.mu.Lock()
	defer n.mu.Unlock()
	c := NewNumbering("")
	c.max, c.grace = n.max, n.grace
	for p, x := range n.m {
		for name, k := range x.names {
			c.put(p, name, k)
		}
	}
	for p, marks := range n.marks {
		for mark, names := range marks {
			for name := range names {
				c.markLocked(p, mark, name, true)
			}
		}
	}
	for p, recs := range n.recs {
		for name, rec := range recs {
			c.setRecordLocked(p, name, rec)
		}
	}
	for p, names := range n.gone {
		for name, at := range names {
			c.goneLocked(p, name, at)
		}
	}
	c.dirty = false
	return c
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// jsonLen is the length of s as a JSON string, HTML-escaped: at least
// what the saved file spends on it.
func jsonLen(s string) int {
	b, _ := json.Marshal(s)
	return len(b)
}

// entryLen bounds what one name with its number costs in the saved file:
// indentation, the quoted name, a colon, ten digits, a comma, a newline.
func entryLen(name string) int { return jsonLen(name) + 24 }
