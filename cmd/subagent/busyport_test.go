package main

import (
	"net"
	"strings"
	"testing"
)

// A busy --listen port stops the daemon with one message that names the
// part once: "responder: listen address ...", not "responder: responder:".
func TestBusyListenPortNamedOnce(t *testing.T) {
	busy, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	addr := busy.LocalAddr().String()
	e := newEnv(t)
	_, stderr, code := e.run(append([]string{"run"}, e.args("--listen", addr)...)...)
	want := `subagent: responder: listen address "` + addr + `": listen udp ` + addr + `: bind: address already in use`
	if code == 0 || !strings.Contains(stderr, want+"\n") || strings.Contains(stderr, "responder: responder:") {
		t.Fatalf("exit %d, stderr:\n%s\nwant the line %q", code, stderr, want)
	}
}
