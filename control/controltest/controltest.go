// Package controltest serves a hierarchy on a control socket for tests of
// the socket's clients (the consumer package, libSpmi's consumer side, the
// MIB generator's daemon path), as the daemon does.
package controltest

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/control"
	"github.com/perfagent/subagent/hoststats"
	"github.com/perfagent/subagent/spmi"
)

// Serve answers on the control socket in dir (which must exist) from h
// until stop is called or the test ends; stop waits for the server and
// may be called more than once.
func Serve(t testing.TB, dir string, h *spmi.Hierarchy) (stop func()) {
	t.Helper()
	ln, err := control.Listen(dir, control.Access{}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		(&control.Server{H: h, Log: slog.New(slog.DiscardHandler)}).Serve(ctx, ln)
		close(done)
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Error("control server did not stop")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// ServeFixture serves the fixture host (hoststats' testdata under
// hoststatsDir) with more providers, read at most every millisecond, on
// the control socket in dir, as Serve does.
func ServeFixture(t testing.TB, dir, hoststatsDir string, more ...spmi.Provider) (stop func()) {
	t.Helper()
	provs, err := hoststats.Providers(hoststats.FixtureConfig(hoststatsDir))
	if err != nil {
		t.Fatal(err)
	}
	h := spmi.NewHierarchy(spmi.Config{Base: asn1tree.MustParse("1.3.6.1.4.1.32473.1"), MinAge: time.Millisecond})
	for _, p := range append(provs, more...) {
		h.Add(p)
	}
	return Serve(t, dir, h)
}
