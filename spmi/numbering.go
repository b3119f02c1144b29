package spmi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/perfagent/subagent/trustdir"
)

// Numbering keeps the ASN.1 number of every named instance whose number is
// not given by a rule (disks, file systems, swap devices, ...). A number is
// never given to another name, and the assignments are saved so that the
// OIDs a manager knows stay valid across restarts.
type Numbering struct {
	mu    sync.Mutex
	file  string
	m     map[string]map[string]uint32 // parent path -> instance name -> number
	dirty bool
}

type numberingFile struct {
	Version  int                          `json:"version"`
	Contexts map[string]map[string]uint32 `json:"contexts"`
}

// NewNumbering returns an empty numbering saved to file ("" keeps it in memory).
func NewNumbering(file string) *Numbering {
	return &Numbering{file: file, m: map[string]map[string]uint32{}}
}

// LoadNumbering reads the numbering saved in file; a missing file is an
// empty numbering, a damaged one an error naming the file.
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
	if f.Version != 1 {
		return nil, fmt.Errorf("instance numbering %s: version %d, this daemon reads version 1", file, f.Version)
	}
	for parent, names := range f.Contexts {
		seen := map[uint32]string{}
		for name, k := range names {
			if k == 0 {
				return nil, fmt.Errorf("instance numbering %s: %s/%s has number 0", file, parent, name)
			}
			if o, dup := seen[k]; dup {
				return nil, fmt.Errorf("instance numbering %s: %s/%s and %s/%s share number %d", file, parent, name, parent, o, k)
			}
			seen[k] = name
		}
		n.m[parent] = names
	}
	return n, nil
}

// Assign returns the number of instance name under parent, giving it the
// lowest number that no other name of that parent ever had and that taken
// does not report as used.
func (n *Numbering) Assign(parent, name string, taken func(uint32) bool) uint32 {
	n.mu.Lock()
	defer n.mu.Unlock()
	names := n.m[parent]
	if k, ok := names[name]; ok {
		return k
	}
	if names == nil {
		names = map[string]uint32{}
		n.m[parent] = names
	}
	used := make(map[uint32]bool, len(names))
	for _, k := range names {
		used[k] = true
	}
	k := uint32(1)
	for used[k] || (taken != nil && taken(k)) {
		k++
	}
	names[name] = k
	n.dirty = true
	return k
}

// Lookup returns the number of a name, if it has one.
func (n *Numbering) Lookup(parent, name string) (uint32, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	k, ok := n.m[parent][name]
	return k, ok
}

// Save writes the numbering when it changed, atomically (trustdir.WriteFile).
func (n *Numbering) Save() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.dirty || n.file == "" {
		return nil
	}
	b, err := json.MarshalIndent(numberingFile{Version: 1, Contexts: n.m}, "", "  ")
	if err != nil {
		return err
	}
	// The daemon checked the state directory (trustdir.Prepare); a missing
	// one is made private. WriteFile never follows a link planted in it.
	if err := os.MkdirAll(filepath.Dir(n.file), 0o700); err != nil {
		return fmt.Errorf("instance numbering: %w", err)
	}
	if err := trustdir.WriteFile(n.file, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("instance numbering: %w", err)
	}
	n.dirty = false
	return nil
}

// Parents lists the contexts that have assignments, sorted.
func (n *Numbering) Parents() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]string, 0, len(n.m))
	for p := range n.m {
		out = append(out, p)
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
	for p, names := range n.m {
		m := make(map[string]uint32, len(names))
		for k, v := range names {
			m[k] = v
		}
		c.m[p] = m
	}
	return c
}
