// Package controltest serves a hierarchy on a control socket for tests of
// the socket's clients (the consumer package, libSpmi's consumer side, the
// MIB generator's daemon path) and of the server itself, as the daemon
// does. It is for tests only.
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

// Hierarchy is a hierarchy of provs under the tests' base OID
// (enterprises.32473.1), read at most every minAge.
func Hierarchy(minAge time.Duration, provs ...spmi.Provider) *spmi.Hierarchy {
	h := spmi.NewHierarchy(spmi.Config{Base: asn1tree.MustParse("1.3.6.1.4.1.32473.1"), MinAge: minAge})
	for _, p := range provs {
		h.Add(p)
	}
	return h
}

// Serve answers on the control socket in dir (which must exist) from h,
// with the default access and no log, as ServeServer does.
func Serve(t testing.TB, dir string, h *spmi.Hierarchy) (stop func()) {
	t.Helper()
	return ServeServer(t, dir, &control.Server{H: h})
}

// ServeServer answers with srv on the control socket in dir (which must
// exist), listening with srv.Access and logging to srv.Log (nil: nowhere),
// until stop is called or the test ends; stop waits for the server and
// may be called more than once.
func ServeServer(t testing.TB, dir string, srv *control.Server) (stop func()) {
	t.Helper()
	if srv.Log == nil {
		srv.Log = slog.New(slog.DiscardHandler)
	}
	ln, err := control.Listen(dir, srv.Access, srv.Log)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		srv.Serve(ctx, ln)
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
	return Serve(t, dir, Hierarchy(time.Millisecond, append(provs, more...)...))
}
