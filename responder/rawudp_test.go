package responder

import (
	"bytes"
	"net"
	"testing"
	"time"
)

// rawUDP gives each datagram's source as net.UDPConn does (IPv4, IPv6,
// and IPv4 peers of a dual-stack socket as IPv4-mapped), and the reply
// reaches that source from the socket's address.
func TestRawUDPSourceAndReply(t *testing.T) {
	for _, c := range []struct{ name, listen, client, to string }{
		{"ipv4", "127.0.0.1:0", "udp4", "127.0.0.1"},
		{"ipv6", "[::1]:0", "udp6", "::1"},
		{"ipv4 to dual stack", "[::]:0", "udp4", "127.0.0.1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn, cl := udpPair(t, c.listen, c.client, c.to)
			for _, m := range []string{"raw", "net"} {
				if _, err := cl.Write([]byte(m)); err != nil {
					t.Fatal(err)
				}
			}
			u, err := newRawUDP(conn)
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 100)
			n, from, err := u.read(buf)
			if err != nil || string(buf[:n]) != "raw" {
				t.Fatalf("read: %q, %v", buf[:n], err)
			}
			n2, want, err := conn.ReadFromUDPAddrPort(buf)
			if err != nil || string(buf[:n2]) != "net" {
				t.Fatalf("ReadFromUDPAddrPort: %q, %v", buf[:n2], err)
			}
			if from != want {
				t.Errorf("source %v, net.UDPConn says %v", from, want)
			}
			if err := u.reply([]byte("answer")); err != nil {
				t.Fatal(err)
			}
			n, err = cl.Read(buf)
			if err != nil || !bytes.Equal(buf[:n], []byte("answer")) {
				t.Errorf("client got %q, %v", buf[:n], err)
			}
		})
	}
}

// An exchange through rawUDP allocates nothing.
func TestRawUDPAllocatesNothing(t *testing.T) {
	ex := newExchange(t, 7, 100)
	if n := testing.AllocsPerRun(20, ex.run); n != 0 {
		t.Errorf("%v allocations an exchange", n)
	}
}

// exchange is a client and a rawUDP on loopback, for exchanges of a
// request and its reply.
type exchange struct {
	tb        testing.TB
	cl        *net.UDPConn
	u         *rawUDP
	req, resp []byte
	buf, got  []byte
}

func newExchange(tb testing.TB, reqLen, respLen int) *exchange {
	srv, cl := udpPair(tb, "127.0.0.1:0", "udp4", "127.0.0.1")
	u, err := newRawUDP(srv)
	if err != nil {
		tb.Fatal(err)
	}
	return &exchange{tb: tb, cl: cl, u: u, req: make([]byte, reqLen), resp: make([]byte, respLen),
		buf: make([]byte, 65536), got: make([]byte, 65536)}
}

// run sends the request, reads it through rawUDP, replies, and reads the
// reply.
func (e *exchange) run() {
	if _, err := e.cl.Write(e.req); err != nil {
		e.tb.Fatal(err)
	}
	if n, _, err := e.u.read(e.buf); err != nil || n != len(e.req) {
		e.tb.Fatalf("read %d octets of %d: %v", n, len(e.req), err)
	}
	if err := e.u.reply(e.resp); err != nil {
		e.tb.Fatal(err)
	}
	if n, err := e.cl.Read(e.got); err != nil || n != len(e.resp) {
		e.tb.Fatalf("client read %d octets of %d: %v", n, len(e.resp), err)
	}
}

// udpPair is a socket listening on listen and a client of it over network
// to address to, both closed when the test ends and bounded to 10 s; the
// test is skipped where the host has no such socket (IPv6 disabled).
func udpPair(t testing.TB, listen, network, to string) (srv, cl *net.UDPConn) {
	t.Helper()
	pc, err := net.ListenPacket("udp", listen)
	if err != nil {
		t.Skipf("no %s socket on this host: %v", listen, err)
	}
	t.Cleanup(func() { pc.Close() })
	srv = pc.(*net.UDPConn)
	cl, err = net.DialUDP(network, nil, &net.UDPAddr{IP: net.ParseIP(to), Port: srv.LocalAddr().(*net.UDPAddr).Port})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	deadline := time.Now().Add(10 * time.Second)
	srv.SetDeadline(deadline)
	cl.SetDeadline(deadline)
	return srv, cl
}
