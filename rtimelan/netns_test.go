package rtimelan

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/icmp"
	"golang.org/x/sys/unix"

	"github.com/perfagent/subagent/client/testutil"
)

// netns creates a network namespace that the test removes at its end,
// with loopback up. Root only: without root or ip the test fails (never
// skips), as the other root tests do.
func netns(t *testing.T, tag string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("creating network namespaces needs root; run it as root (CI does)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Fatal("the ip command is missing: install iproute2 (make test-deps does)")
	}
	name := fmt.Sprintf("rtl-%s-%d", tag, os.Getpid())
	run(t, "ip", "netns", "add", name)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", name).Run() })
	inNS(t, name, "ip", "link", "set", "lo", "up")
	return name
}

func run(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func inNS(t *testing.T, ns string, args ...string) {
	t.Helper()
	run(t, append([]string{"ip", "netns", "exec", ns}, args...)...)
}

// openIn is an Opener that opens its sockets inside the namespace ns: a
// socket stays in the namespace it was created in. The thread that
// entered the namespace is never given back to the runtime.
func openIn(ns string) Opener {
	return func(network, address string) (*icmp.PacketConn, error) {
		type result struct {
			pc  *icmp.PacketConn
			err error
		}
		ch := make(chan result, 1)
		go func() {
			runtime.LockOSThread() // not unlocked: the thread exits with the goroutine
			f, err := os.Open("/run/netns/" + ns)
			if err != nil {
				ch <- result{err: err}
				return
			}
			defer f.Close()
			if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
				ch <- result{err: fmt.Errorf("setns %s: %w", ns, err)}
				return
			}
			pc, err := icmp.ListenPacket(network, address)
			ch <- result{pc, err}
		}()
		r := <-ch
		return r.pc, r.err
	}
}

// TestDatagramSocketsInANamespace measures loopback with unprivileged
// datagram sockets, allowed by ping_group_range inside a namespace of its
// own (the host's setting is left alone). On those sockets the kernel
// writes its own identifier into the requests: the replies must still be
// matched.
func TestDatagramSocketsInANamespace(t *testing.T) {
	ns := netns(t, "dgram")
	inNS(t, ns, "sysctl", "-q", "-w", "net.ipv4.ping_group_range=0 2147483647")
	p, v6err, err := OpenPinger(openIn(ns))
	if err != nil {
		t.Fatal(err)
	}
	if !p.V4.Dgram {
		t.Fatal("the IPv4 socket is raw although ping_group_range allows datagram sockets")
	}
	hosts := []string{"127.0.0.1"}
	if v6err == nil {
		if !p.V6.Dgram {
			t.Fatal("the IPv6 socket is raw")
		}
		hosts = append(hosts, "::1")
	} else {
		t.Logf("no IPv6 in the namespace (%v): ::1 not measured", v6err)
	}
	t.Logf("kernel identifiers: v4 %d", p.V4.ID)
	measure(t, p, hosts, func(s Stats) bool { return s.Responses >= 3 })
}

// TestSilentHostInANamespace measures a host in a second namespace over
// a veth pair: it answers, then is told to ignore echo requests, after
// which requests grow and responses do not.
func TestSilentHostInANamespace(t *testing.T) {
	src, dst := netns(t, "src"), netns(t, "dst")
	va, vb := fmt.Sprintf("rtla%d", os.Getpid()%100000), fmt.Sprintf("rtlb%d", os.Getpid()%100000)
	inNS(t, src, "ip", "link", "add", va, "type", "veth", "peer", "name", vb, "netns", dst)
	inNS(t, src, "ip", "addr", "add", "192.0.2.1/24", "dev", va)
	inNS(t, src, "ip", "link", "set", va, "up")
	inNS(t, dst, "ip", "addr", "add", "192.0.2.2/24", "dev", vb)
	inNS(t, dst, "ip", "link", "set", vb, "up")

	p, _, err := OpenPinger(openIn(src))
	if err != nil {
		t.Fatal(err)
	}
	s := settings("192.0.2.2")
	s.Interval, s.Timeout = 50*time.Millisecond, 300*time.Millisecond
	m := NewMonitor(s, newStore(t), p, nil, nil)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { m.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	testutil.Eventually(t, "answers from the host", 10*time.Second, func() bool { st, _ := statsOf(m, "192.0.2.2"); return st.Responses >= 2 })
	inNS(t, dst, "sysctl", "-q", "-w", "net.ipv4.icmp_echo_ignore_all=1")
	// Requests sent before the host went silent may still be answered:
	// wait until each is answered or given up.
	m.mu.Lock()
	last := m.match.seq
	m.mu.Unlock()
	testutil.Eventually(t, "the requests sent before the switch to be answered or given up", 10*time.Second, func() bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		for seq := range m.match.pending {
			if seq <= last {
				return false
			}
		}
		return true
	})
	before, _ := statsOf(m, "192.0.2.2")
	testutil.Eventually(t, "ten more requests", 10*time.Second, func() bool { st, _ := statsOf(m, "192.0.2.2"); return st.Requests >= before.Requests+10 })
	after, _ := statsOf(m, "192.0.2.2")
	if after.Responses != before.Responses {
		t.Errorf("responses grew from %d to %d while the host ignored echo requests", before.Responses, after.Responses)
	}
	if after.Requests <= before.Requests {
		t.Errorf("requests did not grow: %d -> %d", before.Requests, after.Requests)
	}
}
