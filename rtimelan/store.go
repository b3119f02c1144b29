package rtimelan

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/perfagent/subagent/client/trustdir"
	"github.com/perfagent/subagent/spmi"
)

// StoreFile is the file in the state directory where older versions kept
// the hosts created by reference and every host's number. The daemon
// merges it into its one numbering (LoadOldStore).
const StoreFile = "rtimelan.json"

// FirstHostASN is the number of the first host under RTime/LAN; 1 to 15
// are RTime/LAN's own statistics, present and future.
const FirstHostASN = 16

// Path is the context whose hosts the store numbers.
const Path = "RTime/LAN"

// referenced marks the hosts created by reference in the numbering.
const referenced = "referenced"

// Store is what survives a restart, kept in the daemon's numbering under
// Path: the ASN.1 number of every instance name ever monitored, and the
// hosts created by reference (a mark, which keeps them numbered). A
// number goes to another name only after its host has been gone for
// state.name_grace (spmi.Numbering.Sweep).
type Store struct {
	num *spmi.Numbering
}

// OpenStore checks what num keeps under Path; an error names num's file.
// A nil num keeps the hosts in memory only.
func OpenStore(num *spmi.Numbering) (*Store, error) {
	if num == nil {
		num = spmi.NewNumbering("")
	}
	if err := check(num.Names(Path), num.Marked(Path, referenced)); err != nil {
		return nil, fmt.Errorf("RTime/LAN state in %s: %w", num.File(), err)
	}
	return &Store{num: num}, nil
}

func check(numbers map[string]uint32, refs []string) error {
	for name, k := range numbers {
		if k < FirstHostASN {
			return fmt.Errorf("host %q has number %d, below %d", name, k, FirstHostASN)
		}
	}
	for _, h := range refs {
		if err := CheckHost(h); err != nil || InstanceName(h) != h {
			return fmt.Errorf("referenced host %q is not a valid host name of at most %d bytes", h, maxName)
		}
	}
	return nil
}

// oldStore is the format of StoreFile.
type oldStore struct {
	Version    int               `json:"version"`
	Numbers    map[string]uint32 `json:"numbers"`
	Referenced []string          `json:"referenced"`
}

// LoadOldStore reads a StoreFile written by an older version into a
// numbering named after file, for the daemon to merge into its own. A
// missing file is an error satisfying errors.Is(err, fs.ErrNotExist); a
// damaged one an error naming the file. It never writes.
func LoadOldStore(file string) (*spmi.Numbering, error) {
	b, err := trustdir.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("RTime/LAN state %s: %w", file, err)
	}
	var s oldStore
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("RTime/LAN state %s is damaged (%v); move it away to start afresh", file, err)
	}
	if s.Version != 1 {
		return nil, fmt.Errorf("RTime/LAN state %s: version %d, this daemon reads version 1", file, s.Version)
	}
	if s.Numbers == nil {
		s.Numbers = map[string]uint32{}
	}
	s.canonical()
	if err := check(s.Numbers, s.Referenced); err != nil {
		return nil, fmt.Errorf("RTime/LAN state %s: %w", file, err)
	}
	num := spmi.NewNumbering(file) // never saved: only merged
	for name, k := range s.Numbers {
		if err := num.Put(Path, name, k); err != nil {
			return nil, fmt.Errorf("RTime/LAN state %s: %w", file, err)
		}
	}
	for _, h := range s.Referenced {
		num.Mark(Path, referenced, h, true)
	}
	return num, nil
}

// canonical rewrites IP addresses that older versions kept as typed
// ("0::1") to their one spelling (CanonicalHost), keeping their numbers.
// When the canonical spelling has a number already, the other stays to
// keep its number reserved.
func (s *oldStore) canonical() {
	for name, k := range s.Numbers {
		if c := CanonicalHost(name); c != name {
			if _, ok := s.Numbers[c]; !ok {
				delete(s.Numbers, name)
				s.Numbers[c] = k
			}
		}
	}
	refs := s.Referenced[:0:0]
	for _, h := range s.Referenced {
		refs = append(refs, CanonicalHost(h))
	}
	slices.Sort(refs)
	s.Referenced = slices.Compact(refs)
}

// Number returns name's number, giving it the lowest free one the first
// time; an error says the numbering is full (spmi.ErrNumberingFull).
func (s *Store) Number(name string) (uint32, error) {
	return s.num.Assign(Path, name, func(k uint32) bool { return k < FirstHostASN })
}

// Lookup returns name's number if it has one; it never assigns.
func (s *Store) Lookup(name string) (uint32, bool) { return s.num.Lookup(Path, name) }

// Referenced lists the hosts created by reference, sorted.
func (s *Store) Referenced() []string { return s.num.Marked(Path, referenced) }

// IsReferenced tells whether name was created by reference.
func (s *Store) IsReferenced(name string) bool { return s.num.IsMarked(Path, referenced, name) }

// SetReferenced adds or removes a host created by reference.
func (s *Store) SetReferenced(name string, on bool) { s.num.Mark(Path, referenced, name, on) }

// Save writes the numbering if it changed, durably (spmi.Numbering.Save).
func (s *Store) Save() error {
	if err := s.num.Save(); err != nil {
		return fmt.Errorf("RTime/LAN state: %w", err)
	}
	return nil
}
