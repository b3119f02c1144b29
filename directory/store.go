package directory

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"sync"

	"github.com/perfagent/subagent/client/trustdir"
)

// StoreFile is the generation's file in the state directory.
const StoreFile = "tree-generation"

// StoreStep is how far ahead of the generation its file is written: the
// file holds a high-water mark that no generation given out reaches. A
// new mark is written, in the background, when the generation comes
// within half a step of the last, so a supplier churning costs one write
// per StoreStep/2 changes, never one per change, and nobody waits for the
// disk unless half a step of changes comes within one write. A start
// (after a crash too) goes on from the mark, above every generation seen.
const StoreStep = 1024

// store keeps the generation's high-water mark in a file.
type store struct {
	path string
	err  func(error)

	mu      sync.Mutex
	done    *sync.Cond
	durable uint32 // written: every generation given out is below it
	asked   uint32 // the mark being written, or durable
	writing bool
}

// loadStore reads the mark of path (0 when there is none yet).
func loadStore(path string, onErr func(error)) (*store, error) {
	s := &store{path: path, err: onErr}
	s.done = sync.NewCond(&s.mu)
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
	s.durable, s.asked = uint32(n), uint32(n)
	return s, nil
}

// reach makes the mark pass gen: a write of the next mark starts when gen
// comes within half a step of the one asked for, and reach waits only if
// gen got to the mark on disk.
func (s *store) reach(gen uint32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if uint64(gen)+StoreStep/2 >= uint64(s.asked) {
		s.asked = uint32(min(uint64(gen)+StoreStep, 1<<32-1))
		if !s.writing {
			s.writing = true
			go s.write()
		}
	}
	for gen >= s.durable && s.writing {
		s.done.Wait()
	}
}

// write writes the mark asked for until it is on disk. A write that
// fails is reported and counts as done (the generation goes on; the next
// start may then begin below it, which the report says): it is tried
// again half a step later, not at every change.
func (s *store) write() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.durable != s.asked {
		mark := s.asked
		s.mu.Unlock()
		err := trustdir.WriteFile(s.path, []byte(strconv.FormatUint(uint64(mark), 10)+"\n"), 0o600)
		s.mu.Lock()
		if err != nil && s.err != nil {
			s.err(fmt.Errorf("the tree generation may go back after a restart: %w", err))
		}
		s.durable = mark
		s.done.Broadcast()
	}
	s.writing = false
	s.done.Broadcast()
}

// flush waits for the write under way, if any.
func (s *store) flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.writing {
		s.done.Wait()
	}
}
