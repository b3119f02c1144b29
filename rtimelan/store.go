package rtimelan

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/perfagent/subagent/trustdir"
)

// StoreFile is the file in the state directory that keeps the hosts
// created by reference and every host's number.
const StoreFile = "rtimelan.json"

// FirstHostASN is the number of the first host under RTime/LAN; 1 to 15
// are RTime/LAN's own statistics, present and future.
const FirstHostASN = 16

// Store is what survives a restart: the hosts created by reference, and
// the ASN.1 number of every instance name ever monitored. A number is
// never given to another name, so a manager's OIDs stay valid.
type Store struct {
	file       string
	Version    int               `json:"version"`
	Numbers    map[string]uint32 `json:"numbers"`
	Referenced []string          `json:"referenced"`
}

// LoadStore reads file; a missing file is an empty store, a damaged one an
// error naming the file.
func LoadStore(file string) (*Store, error) {
	s := &Store{file: file, Numbers: map[string]uint32{}, Version: 1}
	b, err := trustdir.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("RTime/LAN state %s: %w", file, err)
	}
	if err := json.Unmarshal(b, s); err != nil {
		return nil, fmt.Errorf("RTime/LAN state %s is damaged (%v); move it away to start afresh", file, err)
	}
	if s.Version != 1 {
		return nil, fmt.Errorf("RTime/LAN state %s: version %d, this daemon reads version 1", file, s.Version)
	}
	if s.Numbers == nil {
		s.Numbers = map[string]uint32{}
	}
	s.canonical()
	seen := map[uint32]string{}
	for name, k := range s.Numbers {
		if k < FirstHostASN {
			return nil, fmt.Errorf("RTime/LAN state %s: host %q has number %d, below %d", file, name, k, FirstHostASN)
		}
		if o, dup := seen[k]; dup {
			return nil, fmt.Errorf("RTime/LAN state %s: hosts %q and %q share number %d", file, name, o, k)
		}
		seen[k] = name
	}
	for _, h := range s.Referenced {
		if err := CheckHost(h); err != nil || InstanceName(h) != h {
			return nil, fmt.Errorf("RTime/LAN state %s: referenced host %q is not a valid host name of at most %d bytes", file, h, maxName)
		}
	}
	return s, nil
}

// canonical rewrites IP addresses that older versions kept as typed
// ("0::1") to their one spelling (CanonicalHost), keeping their numbers.
// When the canonical spelling has a number already, the other stays to
// keep its number reserved.
func (s *Store) canonical() {
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
// time; changed tells that the store must be saved.
func (s *Store) Number(name string) (k uint32, changed bool) {
	if k, ok := s.Numbers[name]; ok {
		return k, false
	}
	used := make(map[uint32]bool, len(s.Numbers))
	for _, k := range s.Numbers {
		used[k] = true
	}
	k = FirstHostASN
	for used[k] {
		k++
	}
	s.Numbers[name] = k
	return k, true
}

// IsReferenced tells whether name was created by reference.
func (s *Store) IsReferenced(name string) bool { return slices.Contains(s.Referenced, name) }

// SetReferenced adds or removes a host created by reference.
func (s *Store) SetReferenced(name string, on bool) {
	i := slices.Index(s.Referenced, name)
	switch {
	case on && i < 0:
		s.Referenced = append(s.Referenced, name)
		slices.Sort(s.Referenced)
	case !on && i >= 0:
		s.Referenced = slices.Delete(s.Referenced, i, i+1)
	}
}

// Save writes the store atomically (trustdir.WriteFile).
func (s *Store) Save() error {
	if s.file == "" {
		return nil
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	// The daemon checked the state directory (trustdir.Prepare); a missing
	// one is made private. WriteFile never follows a link planted in it.
	if err := os.MkdirAll(filepath.Dir(s.file), 0o700); err != nil {
		return fmt.Errorf("RTime/LAN state: %w", err)
	}
	if err := trustdir.WriteFile(s.file, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("RTime/LAN state: %w", err)
	}
	return nil
}
