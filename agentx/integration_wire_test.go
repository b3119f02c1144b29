package agentx

// Cross-checks of the codec against what net-snmp itself puts on the wire:
// the master's GetNext (in both byte orders) and agentxtrap's Notify.

import (
	"bufio"
	"context"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/internal/snmpdtest"
)

// rawPeer speaks AgentX over one socket with the codec only, so a test can
// look at every byte the other side sends.
type rawPeer struct {
	masterConn
}

func dialRaw(t *testing.T, path string) *rawPeer {
	t.Helper()
	c, err := net.DialTimeout("unix", path, ioTimeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawPeer{masterConn{t: t, c: c, br: bufio.NewReader(c)}}
}

// call sends one of our PDUs and returns the master's Response.
func (p *rawPeer) call(req *packet) *packet {
	p.t.Helper()
	p.packetID++
	req.packetID = p.packetID
	p.send(req)
	r := p.expect(typeResponse)
	if r.packetID != req.packetID {
		p.t.Fatalf("Response to packet %d, want %d", r.packetID, req.packetID)
	}
	if r.resError != NoError {
		p.t.Fatalf("master answered %s with %s", req.typ, r.resError)
	}
	return r
}

func TestIntegrationMasterGetNextOnTheWire(t *testing.T) {
	s := snmpdtest.Start(t, snmpdtest.Options{})
	for i, big := range []bool{true, false} {
		root := asn1tree.OID{1, 3, 6, 1, 4, 1, 32473, uint32(7 + i)}
		var flags uint8
		if big {
			flags = flagNetworkByteOrder
		}
		p := dialRaw(t, s.AgentXPath)
		open := p.call(&packet{header: header{typ: typeOpen, flags: flags}, timeout: 5, id: root, descr: "raw"})
		if open.bigEndian() != big {
			t.Errorf("big=%v: master answered Open in the other byte order", big)
		}
		sid := open.sessionID
		p.call(&packet{header: header{typ: typeRegister, flags: flags, sessionID: sid}, priority: 127, subtree: root})

		// A GetNext from just before our region: the master must send an
		// inclusive range from our root to the end of the region.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		type result struct {
			out string
			err error
		}
		done := make(chan result, 1)
		go func() {
			out, _, err := s.Cmd(ctx, s.Tools.Snmpgetnext, []string{"-t", "5", "-r", "0"}, root[:len(root)-1].Append(root[len(root)-1]-1).String())
			done <- result{out, err}
		}()
		raw := p.readRaw()
		if raw[0] != 1 || pduType(raw[1]) != typeGetNext || raw[2]&flagNetworkByteOrder != flags || raw[3] != 0 {
			t.Fatalf("big=%v: master's header %x", big, raw[:4])
		}
		if getU32(raw[4:], big) != sid || int(getU32(raw[16:], big)) != len(raw)-headerLen {
			t.Fatalf("big=%v: header %x does not carry session %d and the payload length in our byte order", big, raw[:headerLen], sid)
		}
		// net-snmp compresses 1.3.6.1.4.1.32473.N to prefix 4 + 3 sub-identifiers.
		if raw[headerLen] != 3 || raw[headerLen+1] != 4 || raw[headerLen+2] != 1 {
			t.Errorf("big=%v: first OID starts %x, want n_subid 3, prefix 4, include 1", big, raw[headerLen:headerLen+4])
		}
		req, err := decodePacket(raw)
		if err != nil {
			t.Fatalf("big=%v: our decoder rejects the master's GetNext: %v\n%x", big, err, raw)
		}
		if len(req.ranges) != 1 || !req.ranges[0].start.Equal(root) || !req.ranges[0].include || !req.ranges[0].end.Equal(successor(root)) {
			t.Fatalf("big=%v: master sent %+v", big, req.ranges)
		}

		// Answer with the responder, in the master's byte order.
		tree, _ := asn1tree.Build([]asn1tree.Entry[asn1tree.Value]{{OID: root.Append(1, 0), Val: asn1tree.Str("captured")}})
		rsp := newResponder(subtreeScope(root), func() asn1tree.View { return tree })
		var resp packet
		rsp.answer(req, &resp, sid, time.Now())
		out, err := appendPacket(nil, &resp)
		if err != nil {
			t.Fatal(err)
		}
		p.writeRaw(out)
		r := <-done
		cancel()
		want := "." + root.Append(1, 0).String() + ` = STRING: "captured"`
		if r.err != nil || strings.TrimSpace(r.out) != want {
			t.Errorf("big=%v: snmpgetnext printed %q (%v), want %q", big, r.out, r.err, want)
		}
		p.call(&packet{header: header{typ: typeClose, flags: flags, sessionID: sid}, reason: reasonShutdown})
	}
}

// agentxtrap is net-snmp's own AgentX encoder: our decoder must read its
// Open, Notify and Close, and it must accept our Responses.
func TestIntegrationAgentxtrapOnTheWire(t *testing.T) {
	tools := snmpdtest.FindTools(t)
	m := newFakeMaster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, tools.Agentxtrap, "-x", m.addr, "1.3.6.1.4.1.32473.2.0.9",
		b("4.0").String(), "s", "hi there", b("6.0").String(), "c", "5", b("7.0").String(), "o", "1.3.6.1.4.1.32473.3")
	cmd.Env = append(cmd.Environ(), "MIBS=", "SNMPCONFPATH="+filepath.Dir(m.path), "SNMP_PERSISTENT_DIR="+filepath.Dir(m.path))
	done := make(chan error, 1)
	var outBuf strings.Builder
	cmd.Stdout, cmd.Stderr = &outBuf, &outBuf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()

	c := m.accept()
	open := c.expect(typeOpen)
	t.Logf("agentxtrap uses network byte order: %v", open.bigEndian())
	c.sessionID = 9
	c.respond(open, NoError)
	n := c.expect(typeNotify)
	want := "1.3.6.1.6.3.1.1.4.1.0=OID:1.3.6.1.4.1.32473.2.0.9 4.0=OctetString:hi there 6.0=Counter32:5 7.0=OID:1.3.6.1.4.1.32473.3"
	if got := vbStrings(n.varbinds); got != want {
		t.Errorf("agentxtrap's Notify decodes to\n %s\nwant\n %s", got, want)
	}
	if n.sessionID != 9 {
		t.Errorf("Notify in session %d, want 9", n.sessionID)
	}
	c.respond(n, NoError)
	c.respond(c.expect(typeClose), NoError)
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("agentxtrap: %v: %s", err, outBuf.String())
		}
	case <-ctx.Done():
		t.Fatal("agentxtrap did not finish")
	}
}
