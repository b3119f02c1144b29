package rtimelan

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/icmp"
	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"

	"github.com/perfagent/subagent/client/testutil"
)

func TestOpenFailureNamesTheSysctlAndCapability(t *testing.T) {
	deny := func(network, _ string) (*icmp.PacketConn, error) {
		return nil, &syscallErr{network}
	}
	_, _, err := OpenPinger(deny)
	if err == nil {
		t.Fatal("opened without sockets")
	}
	for _, want := range []string{"net.ipv4.ping_group_range", "CAP_NET_RAW", "udp4", "ip4:icmp"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}

type syscallErr struct{ network string }

func (e *syscallErr) Error() string { return e.network + ": socket: permission denied" }
func (e *syscallErr) Unwrap() error { return syscall.EPERM }

// measureTimeout is the monitor's timeout in the real-socket tests: a
// reply counts only within it, and it is long enough for a loaded machine.
const measureTimeout = 2 * time.Second

// measure runs a monitor of hosts over p until cond holds on every host
// (at most 10 s) and returns the statistics and the monitor's counts.
func measure(t *testing.T, p *Pinger, hosts []string, cond func(Stats) bool) (map[string]Stats, Counts) {
	t.Helper()
	s := settings(hosts...)
	s.Interval = 50 * time.Millisecond
	s.Timeout = measureTimeout
	m := NewMonitor(s, newStore(t), p, nil, nil)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { m.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	out := map[string]Stats{}
	testutil.Eventually(t, "the condition on every host", 10*time.Second, func() bool {
		ok := true
		for _, h := range hosts {
			st, _ := statsOf(m, h)
			out[h] = st
			ok = ok && cond(st)
		}
		return ok
	})
	c, _ := m.view()
	return out, c
}

// Loopback answers through the real sockets: replies are matched to their
// requests, each within the monitor's timeout (a later one would count
// late, not as a response), and none is late or foreign. How fast is the
// machine's business, not the test's.
func TestPingLoopback(t *testing.T) {
	p, v6err, err := OpenPinger(nil)
	if err != nil {
		t.Skipf("this machine allows no ICMP socket to this user: %v", err)
	}
	hosts := []string{"127.0.0.1"}
	if v6err != nil {
		t.Logf("no IPv6 ICMP socket (%v): ::1 not measured", v6err)
	} else {
		hosts = append(hosts, "::1")
	}
	t.Logf("IPv4 socket: datagram %v, identifier %d", p.V4.Dgram, p.V4.ID)
	got, c := measure(t, p, hosts, func(s Stats) bool { return s.Responses >= 3 })
	limit := float64(measureTimeout) / float64(time.Millisecond)
	for h, s := range got {
		var bands float64
		for i := range s.Bands {
			bands += s.BandPercent(i)
		}
		if s.Requests < s.Responses || s.Avg <= 0 || s.Avg > limit || s.Last <= 0 || s.Last > measureTimeout || bands != 100 {
			t.Errorf("%s: %+v, want round trips above 0 and within %v", h, s, measureTimeout)
		}
	}
	if c.Late != 0 || c.Foreign != 0 || c.Duplicate != 0 {
		t.Errorf("counts %+v: want no late, foreign or duplicate reply on loopback", c)
	}
}

func TestOpenerErrorsAreKeptApartByFamily(t *testing.T) {
	only4 := func(network, addr string) (*icmp.PacketConn, error) {
		if strings.HasSuffix(network, "6") || strings.HasPrefix(network, "ip6") {
			return nil, errors.Join(errors.New(network), syscall.EAFNOSUPPORT)
		}
		return icmp.ListenPacket(network, addr)
	}
	p, v6err, err := OpenPinger(only4)
	if err != nil {
		t.Skipf("no IPv4 ICMP socket for this user: %v", err)
	}
	defer p.Close()
	if p.V6 != nil || v6err == nil || !strings.Contains(v6err.Error(), "no IPv6 on this host") {
		t.Errorf("v6 socket %v, error %v", p.V6, v6err)
	}
}

// On loopback the round trip is well below a millisecond: resptime keeps
// it (it was rounded to 0). Another program pinging the same addresses
// meanwhile, with its own identifier, is not counted as foreign, although
// a raw socket sees its replies.
func TestLoopbackResptimeIsSubMillisecondAndOthersPingsAreNotForeign(t *testing.T) {
	p, v6err, err := OpenPinger(nil)
	if err != nil {
		t.Skipf("this machine allows no ICMP socket to this user: %v", err)
	}
	other, _, err := OpenPinger(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	hosts := []netip.Addr{lo4}
	if v6err == nil && other.V6 != nil {
		hosts = append(hosts, lo6)
	} else {
		t.Logf("no IPv6 ICMP socket (%v): ::1 not measured", v6err)
	}
	for _, s := range []*Socket{other.V4, other.V6} {
		if s != nil && !s.Dgram {
			s.ID = p.ID(s.V6) ^ 0x5a5a // surely not ours
		}
	}
	t.Logf("IPv4 socket: datagram %v (a raw one sees every program's replies)", p.V4.Dgram)

	// The other program: pings every 5 ms and counts its replies.
	var mu sync.Mutex
	replies := 0
	go other.Receive(func(v6 bool, b []byte, from netip.Addr, _ time.Time) {
		if msg, err := icmp.ParseMessage(map[bool]int{false: 1, true: 58}[v6], b); err == nil {
			if e, ok := msg.Body.(*icmp.Echo); ok && (msg.Type == ipv4.ICMPTypeEchoReply || msg.Type == ipv6.ICMPTypeEchoReply) && string(e.Data) == "another pinger" {
				mu.Lock()
				replies++
				mu.Unlock()
			}
		}
	})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for seq := uint16(1); ctx.Err() == nil; seq++ {
			for _, a := range hosts {
				other.Send(a, seq, []byte("another pinger"))
			}
			select {
			case <-ctx.Done():
			case <-tick.C:
			}
		}
	}()

	s := settings()
	for _, a := range hosts {
		s.Hosts = append(s.Hosts, a.String())
	}
	s.Interval, s.Timeout = 50*time.Millisecond, measureTimeout
	m := NewMonitor(s, newStore(t), p, nil, nil)
	done := make(chan struct{})
	go func() { m.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	// Until each host has 5 replies and the other program 20.
	testutil.Eventually(t, "5 replies per host and 20 to the other program", 10*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, a := range hosts {
			if st, _ := statsOf(m, a.String()); st.Responses < 5 {
				return false
			}
		}
		return replies >= 20
	})
	c, hs := m.view()
	for _, h := range hs {
		// Whole milliseconds read 0 here (a busy machine may take longer
		// than 1 ms; the timeout bounds every response).
		if ms := h.stats.LastMillis(); ms <= 0 || h.stats.Last > measureTimeout {
			t.Errorf("%s: resptime %v ms, want above 0 and within %v", h.name, ms, measureTimeout)
		}
	}
	if c.Foreign != 0 || c.Late != 0 {
		t.Errorf("foreign %d late %d while another program pinged; want 0", c.Foreign, c.Late)
	}
}
