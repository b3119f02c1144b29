package agentx

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// unixPair returns a raw client and the plain server end of a Unix stream
// connection.
func unixPair(t *testing.T, timeout time.Duration) (net.Conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("unix", filepath.Join(t.TempDir(), "s"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	c, err := net.Dial("unix", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	srv := <-accepted
	if srv == nil {
		t.Fatal("accept failed")
	}
	rc := newRawConn(c, timeout)
	if _, ok := rc.(*rawConn); !ok {
		t.Fatalf("a Unix connection was not wrapped: %T", rc)
	}
	t.Cleanup(func() { rc.Close(); srv.Close() })
	return rc, srv
}

func TestRawConnReadsWritesAndSeesEOF(t *testing.T) {
	c, srv := unixPair(t, time.Second)
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 4)
	if _, err := io.ReadFull(srv, got); err != nil || string(got) != "ping" {
		t.Fatalf("server read %q, %v", got, err)
	}
	go func() {
		time.Sleep(20 * time.Millisecond) // the read below has to wait in the poller
		srv.Write([]byte("pong"))
		srv.Close()
	}()
	if _, err := io.ReadFull(c, got); err != nil || string(got) != "pong" {
		t.Fatalf("client read %q, %v", got, err)
	}
	if n, err := c.Read(got); n != 0 || err != io.EOF {
		t.Fatalf("after the peer closed: %d, %v; want 0, EOF", n, err)
	}
}

// A write larger than the socket's buffer completes, intact, once the peer
// reads; one the peer never reads ends at the timeout, not later.
func TestRawConnWriteWaitsForRoom(t *testing.T) {
	c, srv := unixPair(t, 5*time.Second)
	big := make([]byte, 8<<20)
	for i := range big {
		big[i] = byte(i * 7)
	}
	got := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(srv, int64(len(big))))
		got <- b
	}()
	if n, err := c.Write(big); n != len(big) || err != nil {
		t.Fatalf("Write: %d, %v; want %d, nil", n, err, len(big))
	}
	if b := <-got; !bytes.Equal(b, big) {
		t.Fatalf("the peer read %d bytes, not what was written", len(b))
	}
}

func TestRawConnWriteTimesOutWhenNobodyReads(t *testing.T) {
	c, _ := unixPair(t, 100*time.Millisecond)
	start := time.Now()
	n, err := c.Write(make([]byte, 8<<20))
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Write to a peer that never reads: %d, %v; want a deadline error", n, err)
	}
	if n <= 0 || n >= 8<<20 {
		t.Errorf("wrote %d bytes before the deadline; want some, not all", n)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the write took %v with a 100ms timeout", d)
	}
}

func TestRawConnLeavesOtherConnsAlone(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if c := newRawConn(a, time.Second); c != a {
		t.Fatalf("a pipe was wrapped: %T", c)
	}
}
