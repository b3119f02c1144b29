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

	"github.com/perfagent/subagent/control"
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
