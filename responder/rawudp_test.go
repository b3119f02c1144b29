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
	srv, cl := udpPair(t, "127.0.0.1:0", "udp4", "127.0.0.1")
	u, err := newRawUDP(srv)
	if err != nil {
		t.Fatal(err)
	}
	req, buf, got := []byte("request"), make([]byte, 100), make([]byte, 100)
	if n := testing.AllocsPerRun(20, func() {
		if _, err := cl.Write(req); err != nil {
			t.Fatal(err)
		}
		if _, _, err := u.read(buf); err != nil {
			t.Fatal(err)
		}
		if err := u.reply(req); err != nil {
			t.Fatal(err)
		}
		if _, err := cl.Read(got); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("%v allocations an exchange", n)
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
