package daemon

import (
	"context"
	"log/slog"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/config"
	"github.com/perfagent/subagent/internal/snmpdtest"
	"github.com/perfagent/subagent/responder"
)

// Every goroutine the daemon starts ends before Run returns: the count
// after Run equals the count before New, with every part that starts
// some at work (both front ends answering, readings for requests, the
// memory returner, the control socket, a reload replacing the trap
// sender).
func TestRunJoinsEveryGoroutine(t *testing.T) {
	s := snmpdtest.Start(t, snmpdtest.Options{})
	c := fixtureConfig(t)
	c.Listen, c.AgentX = "127.0.0.1:0", s.AgentXAddress
	c.Traps = []config.TrapConf{{Address: "127.0.0.1:9", Version: "v2c", Community: "public"}}
	before := goroutines()
	var logs testutil.Buffer
	d, err := NewServing(c, slog.New(slog.NewTextHandler(&logs, nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	testutil.Eventually(t, "the daemon to serve", 10*time.Second, func() bool {
		return strings.Contains(logs.String(), "control socket ready")
	})
	var r *responder.Responder
	for _, f := range d.frontends {
		if f, ok := f.(*responder.Responder); ok {
			r = f
		}
	}
	<-r.Ready()
	addr := r.Addr().(*net.UDPAddr)
	g := &gosnmp.GoSNMP{Target: "127.0.0.1", Port: uint16(addr.Port), Community: c.SNMP.Community,
		Version: gosnmp.Version2c, Timeout: 5 * time.Second}
	if err := g.Connect(); err != nil {
		t.Fatal(err)
	}
	defer g.Conn.Close()
	if _, err := g.WalkAll(c.Base.String()); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, "the AgentX session to register", 10*time.Second, func() bool {
		v, err := s.Get(c.Base.String() + ".12.31.1.0") // Agent/agentx/connected
		return err == nil && len(v) == 1 && v[0].Value == "1"
	})
	if _, err := s.Walk(c.Base.String() + ".1"); err != nil {
		t.Fatal(err)
	}
	d.h.ReturnMemory()
	conn, err := net.Dial("unix", spmiwire.SocketPath(c.RunDir))
	if err == nil {
		conn.Close()
	}
	next := *c
	next.Traps = []config.TrapConf{{Address: "127.0.0.1:19", Version: "v2c", Community: "public"}}
	if err := d.Reload(&next); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// Run has returned: what it started has ended, but for a goroutine's
	// last instructions after it signalled its end (wg.Done, a close).
	// Goroutines are told apart by ID: another test's that end meanwhile
	// do not hide one of the daemon's that is left.
	var left []string
	for end := time.Now().Add(time.Second); ; runtime.Gosched() {
		left = newGoroutines(before)
		if len(left) == 0 || time.Now().After(end) {
			break
		}
	}
	if len(left) > 0 {
		t.Fatalf("%d goroutines started after New are left after Run returned:\n%s", len(left), strings.Join(left, "\n\n"))
	}
}

// goroutines are the stacks of every goroutine by ID.
func goroutines() map[string]string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	out := map[string]string{}
	for _, g := range strings.Split(string(buf), "\n\n") {
		if id, _, ok := strings.Cut(strings.TrimPrefix(g, "goroutine "), " "); ok {
			out[id] = g
		}
	}
	return out
}

// newGoroutines are the stacks of the goroutines not in before.
func newGoroutines(before map[string]string) []string {
	var out []string
	for id, g := range goroutines() {
		if _, ok := before[id]; !ok {
			out = append(out, g)
		}
	}
	return out
}
