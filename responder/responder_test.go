package responder

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/perfagent/subagent/asn1tree"
)

func TestNewChecksConfig(t *testing.T) {
	view := func() asn1tree.View { return nil }
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{}, "community must not be empty"},
		{Config{Community: "p", MaxMsgSize: 483}, "max message size 483 is not from 484 to 65507"},
		{Config{Community: "p", MaxMsgSize: 65508}, "max message size 65508"},
		{Config{Community: "p", MaxRepetitions: -1}, "max repetitions -1"},
		{Config{Community: "p", Listen: "nowhere"}, `listen address "nowhere": want host:port`},
		{Config{Community: "p", Listen: "::1:161"}, `listen address "::1:161": want host:port`},
		{Config{Community: "p", Listen: "127.0.0.1:99999"}, `listen address "127.0.0.1:99999": port "99999" is not a number`},
		{Config{Community: "p", Listen: "127.0.0.1:snmp"}, `port "snmp" is not a number`},
	} {
		_, err := New(c.cfg, view, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cfg, err, c.want)
		}
	}
	if _, err := New(Config{Community: "p"}, nil, nil); err == nil {
		t.Error("nil view function accepted")
	}
	r, err := New(Config{Community: "p"}, view, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.cfg.Listen != DefaultListen || r.cfg.MaxMsgSize != DefaultMaxMsgSize || r.cfg.MaxRepetitions != DefaultMaxRepetitions {
		t.Errorf("defaults: %+v", r.cfg)
	}
	if r.addr.String() != DefaultListen {
		t.Errorf("resolved %v", r.addr)
	}
}

// TestRunServesAndStops talks to Run over loopback with gosnmp as client.
func TestRunServesAndStops(t *testing.T) {
	r := newTestResponder(t, Config{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	select {
	case <-r.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("not bound after 10s")
	}
	a, ok := r.Addr().(*net.UDPAddr)
	if !ok || a.Port == 0 || !a.IP.IsLoopback() {
		t.Fatalf("Addr %v", r.Addr())
	}
	if err := r.Run(ctx); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("second Run: %v", err)
	}
	g := &gosnmp.GoSNMP{Target: a.IP.String(), Port: uint16(a.Port), Community: "public",
		Version: gosnmp.Version2c, Timeout: 5 * time.Second, Retries: 0}
	if err := g.Connect(); err != nil {
		t.Fatal(err)
	}
	defer g.Conn.Close()
	p, err := g.Get([]string{base + ".1.4.0"})
	if err != nil || len(p.Variables) != 1 || gotValue(p.Variables[0]) != "hello responder" {
		t.Fatalf("Get over UDP: %v %v", err, p)
	}
	// Another responder cannot take the same port.
	r2 := newTestResponder(t, Config{Listen: a.String()})
	if err := r2.Run(ctx); err == nil || !strings.Contains(err.Error(), `listen address "`+a.String()+`"`) {
		t.Errorf("second bind: %v", err)
	}
	select {
	case <-r2.Ready(): // closed on failure too
	default:
		t.Error("Ready not closed after a failed Run")
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return 10s after cancel")
	}
	if c := r.Stats().Snapshot(); c.InPkts != 1 || c.OutGetResponses != 1 || c.SendErrors != 0 {
		t.Errorf("counters %+v", c)
	}
}
