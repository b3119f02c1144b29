package directory

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/perfagent/subagent/client/trustdir"
)

// StoreFile is the generation's file in the state directory.
const StoreFile = "tree-generation"

// StoreStep is how far ahead of the generation its file is written: the
// file holds a high-water mark that no generation given out reaches, and
// is written again only when the generation does, so a supplier churning
// costs one write per StoreStep changes, never one per change. A start
// (after a crash too) goes on from the mark, above every generation seen.
const StoreStep = 64

// store keeps the generation's high-water mark in a file.
type store struct {
	path string
	mark uint32 // written: every generation given out is below it
	err  func(error)
}

// loadStore reads the mark of path (0 when there is none yet).
func loadStore(path string, onErr func(error)) (*store, error) {
	s := &store{path: path, err: onErr}
	b, err := trustdir.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 32)
	if err != nil {
		return nil, fmt.Errorf("%s: the tree generation %q is not a number from 0 to %d (remove the file to start again)", path, strings.TrimSpace(string(b)), uint32(1<<32-1))
	}
	s.mark = uint32(n)
	return s, nil
}

// reach makes the mark pass gen, writing it when gen got to it. A write
// that fails is reported; the generation goes on (the next start may
// then begin below it, which the report says).
func (s *store) reach(gen uint32) {
	if gen < s.mark {
		return
	}
	next := uint64(gen) + StoreStep
	if next > 1<<32-1 {
		next = 1<<32 - 1
	}
	if err := trustdir.WriteFile(s.path, []byte(strconv.FormatUint(next, 10)+"\n"), 0o600); err != nil {
		s.err(fmt.Errorf("the tree generation may go back after a restart: %w", err))
	}
	s.mark = uint32(next) // a failed write is tried again a step later, not at every change
}
