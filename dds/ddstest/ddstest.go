// Package ddstest runs a real dds.Server with a hierarchy serving it, for
// the tests of the supplier libraries in Go (dds) and C (libspmi), and
// checks what they serve.
package ddstest

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/dds"
	"github.com/perfagent/subagent/spmi"
)

// Daemon is a running server and the hierarchy it feeds.
type Daemon struct {
	S      *dds.Server
	H      *spmi.Hierarchy
	RunDir string // holds dds.sock
	done   chan struct{}
	once   sync.Once
}

// Start serves runDir/dds.sock (runDir "": a new temporary directory) with
// the limits lim (zero: the defaults) until the test ends.
func Start(t testing.TB, runDir string, lim ddswire.Limits) *Daemon {
	t.Helper()
	return StartConfig(t, runDir, dds.ServerConfig{Limits: lim})
}

// StartConfig is Start with a server configuration of the test's; its
// socket is runDir/dds.sock and a zero IOTimeout is 2 s.
func StartConfig(t testing.TB, runDir string, cfg dds.ServerConfig) *Daemon {
	t.Helper()
	if runDir == "" {
		runDir = t.TempDir()
	}
	cfg.Socket = filepath.Join(runDir, "dds.sock")
	if cfg.IOTimeout == 0 {
		cfg.IOTimeout = 2 * time.Second
	}
	s, err := dds.NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	d := &Daemon{S: s, RunDir: runDir, done: make(chan struct{})}
	go func() { s.Serve(); close(d.done) }()
	t.Cleanup(d.Close)
	d.H = spmi.NewHierarchy(spmi.Config{Base: asn1tree.OID{1, 3, 6, 1, 4, 1, 32473, 1}})
	d.H.Add(s.Provider())
	return d
}

// Socket is the path suppliers connect to.
func (d *Daemon) Socket() string { return filepath.Join(d.RunDir, "dds.sock") }

// Close stops the server; it panics if Serve does not return within 5 s.
func (d *Daemon) Close() {
	d.once.Do(func() {
		d.S.Close()
		select {
		case <-d.done:
		case <-time.After(5 * time.Second):
			panic("dds.Server.Serve did not return")
		}
	})
}

// Node is the node at path in a fresh snapshot, nil if absent.
func (d *Daemon) Node(path string) *spmi.Node {
	n, _ := d.H.Refresh().Lookup(path)
	return n
}

// ReadAll returns the values at paths from one fresh snapshot, read
// through one Answer, so that each supplier's come from one moment; false
// if one is not served or has no value.
func (d *Daemon) ReadAll(paths []string) ([]uint64, bool) {
	snap := d.H.Refresh()
	ans := snap.Answer()
	out := make([]uint64, len(paths))
	for i, p := range paths {
		n, err := snap.Lookup(p)
		if err != nil {
			return nil, false
		}
		v := ans.Value(n)
		if !v.OK() {
			return nil, false
		}
		out[i] = v.Uint64()
	}
	return out, true
}

// CheckBatch tells what is wrong with one read of values that writers
// always set together and only increase: they must be equal, not zero,
// and not below last (the previous read's).
func CheckBatch(v []uint64, last uint64) error {
	if !Whole(v) {
		return fmt.Errorf("served %v: a batch read in part", v)
	}
	switch {
	case len(v) > 0 && v[0] == 0:
		return fmt.Errorf("served %v: zeros", v)
	case len(v) > 0 && v[0] < last:
		return fmt.Errorf("served %v after %d: a value went back", v, last)
	}
	return nil
}

// Whole reports whether values set together were read together: all equal.
func Whole(v []uint64) bool {
	for _, x := range v {
		if x != v[0] {
			return false
		}
	}
	return true
}
