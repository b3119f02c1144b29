package traps_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/internal/snmpdtest"
	"github.com/perfagent/subagent/traps"
	"github.com/perfagent/subagent/usm"
)

// tlv splits one BER element off b: its tag, its contents, the rest.
func tlv(t *testing.T, b []byte) (byte, []byte, []byte) {
	t.Helper()
	if len(b) < 2 {
		t.Fatalf("BER: %d octets left", len(b))
	}
	tag, n, b := b[0], int(b[1]), b[2:]
	if n&0x80 != 0 {
		k := n & 0x7f
		if k > 4 || len(b) < k {
			t.Fatalf("BER: length of %d octets", k)
		}
		n = 0
		for _, c := range b[:k] {
			n = n<<8 | int(c)
		}
		b = b[k:]
	}
	if n > len(b) {
		t.Fatalf("BER: %d octets announced, %d left", n, len(b))
	}
	return tag, b[:n], b[n:]
}

func berInt(b []byte) int64 {
	var v int64
	for _, c := range b {
		v = v<<8 | int64(c)
	}
	return v
}

// v3Header decodes what an SNMPv3 message carries in the clear: the
// authoritative engine's ID, boots and time (RFC 3414 2.4).
func v3Header(t *testing.T, msg []byte) (id []byte, boots, etime int64) {
	t.Helper()
	_, seq, _ := tlv(t, msg)
	_, ver, rest := tlv(t, seq)
	if berInt(ver) != 3 {
		t.Fatalf("version %d, want SNMPv3 (3)", berInt(ver))
	}
	_, _, rest = tlv(t, rest) // msgGlobalData
	_, sp, _ := tlv(t, rest)  // msgSecurityParameters, an OCTET STRING
	_, usmSeq, _ := tlv(t, sp)
	_, id, rest = tlv(t, usmSeq)
	_, b, rest := tlv(t, rest)
	_, tm, _ := tlv(t, rest)
	return id, berInt(b), berInt(tm)
}

// Every v3 trap carries the agent's engine as its authoritative engine:
// its ID, its boots and its time (seconds since the engine's start),
// whatever the notification's sysUpTime.
func TestV3TrapCarriesTheAgentsEngine(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	eng := usm.Engine{ID: []byte("\x80\x00\x7e\xd9\x05agent-engine"), Boots: 7, Start: time.Now().Add(-1000 * time.Second)}
	s, err := traps.New([]traps.Dest{{Address: pc.LocalAddr().String(), Version: "v3", User: "u",
		AuthProto: "SHA256", AuthPass: "authpass123", PrivProto: "AES", PrivPass: "privpass123"}}, eng, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Send(note(1)) // sysUpTime 12.34 s
	buf := make([]byte, 4096)
	if err := pc.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	n, _, err := pc.ReadFrom(buf)
	if err != nil {
		t.Fatalf("no trap arrived: %v", err)
	}
	id, boots, etime := v3Header(t, buf[:n])
	if !bytes.Equal(id, eng.ID) || boots != 7 || etime < 1000 || etime > 1010 {
		t.Errorf("msgAuthoritativeEngine ID %x boots %d time %d, want %x, 7 and about 1000", id, boots, etime, eng.ID)
	}
}

// A v3 inform whose receiver restarted with a new engine (snmptrapd with
// a fresh state: new engine ID, boots, time) fails its first try, which
// used the old engine's keys; it is re-sent after rediscovering the
// receiver's engine, within its retries, and acknowledged.
func TestV3InformRediscoversRestartedReceiver(t *testing.T) {
	const user, auth, priv = "informer", "authpass123", "privpass123"
	conf := snmpdtest.TrapdOptions{Config: []string{"createUser " + user + " SHA-256 " + auth + " AES " + priv}}
	first := snmpdtest.StartTrapdWith(t, conf)
	var mu sync.Mutex
	outcome := map[uint32]error{}
	reported := map[uint32]bool{}
	report := func(n *traps.Notification, _ traps.Dest, err error) {
		mu.Lock()
		defer mu.Unlock()
		outcome[n.LogIndex], reported[n.LogIndex] = err, true
	}
	s, err := traps.NewReporting([]traps.Dest{{Address: first.Addr, Version: "v3", Inform: true, Retries: 1, Timeout: 2 * time.Second,
		User: user, AuthProto: "SHA256", AuthPass: auth, PrivProto: "AES", PrivPass: priv}}, engine, nil, report)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	wait := func(idx uint32) error {
		t.Helper()
		testutil.Eventually(t, fmt.Sprintf("the outcome of inform %d", idx), 20*time.Second, func() bool {
			mu.Lock()
			defer mu.Unlock()
			return reported[idx]
		})
		mu.Lock()
		defer mu.Unlock()
		return outcome[idx]
	}
	n := note(31)
	n.LogIndex = 1
	s.Send(n)
	if err := wait(1); err != nil {
		t.Fatalf("first inform: %v", err)
	}
	first.Stop()
	conf.Addr = first.Addr
	second := snmpdtest.StartTrapdWith(t, conf) // same address, new engine
	n = note(32)
	n.LogIndex = 2
	s.Send(n)
	if err := wait(2); err != nil {
		t.Fatalf("inform after the receiver restarted: %v\n%s", err, second.Log())
	}
	if log, err := second.WaitFor(10*time.Second, ".1.3.6.1.6.3.1.1.4.1.0 = OID: ."+base.String()+".0.32"); err != nil {
		t.Errorf("%v\n%s", err, log)
	}
}

// v2c traps to one address whose receiver is closed for every other
// notification: each ICMP port unreachable is attributed to the trap that
// caused it (first reported sent, then failed), never to the next one,
// and each trap sent while the receiver listens arrives and stays sent.
func TestICMPErrorGoesToItsOwnTrap(t *testing.T) {
	for _, host := range []string{"127.0.0.1", "[::1]"} { // IP_RECVERR, IPV6_RECVERR
		t.Run(host, func(t *testing.T) { icmpErrorGoesToItsOwnTrap(t, host) })
	}
}

func icmpErrorGoesToItsOwnTrap(t *testing.T, host string) {
	pc, err := net.ListenPacket("udp", host+":0")
	if err != nil {
		t.Fatal(err)
	}
	addr := pc.LocalAddr().String()
	pc.Close()
	var mu sync.Mutex
	results := map[uint32][]string{} // each report, in order
	report := func(n *traps.Notification, _ traps.Dest, err error) {
		mu.Lock()
		defer mu.Unlock()
		r := "sent"
		if err != nil {
			r = "failed: " + err.Error()
		}
		results[n.LogIndex] = append(results[n.LogIndex], r)
	}
	var logs testutil.Buffer
	s, err := traps.NewReporting([]traps.Dest{{Address: addr, Version: "v2c", Community: "c"}}, usm.Engine{},
		slog.New(slog.NewTextHandler(&logs, nil)), report)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	last := func(idx uint32) string {
		mu.Lock()
		defer mu.Unlock()
		r := results[idx]
		if len(r) == 0 {
			return ""
		}
		return r[len(r)-1]
	}
	const rounds = 6
	for i := uint32(1); i <= 2*rounds; i++ {
		n := note(40)
		n.LogIndex = i
		if i%2 == 1 { // closed: port unreachable
			s.Send(n)
			testutil.Eventually(t, fmt.Sprintf("trap %d to the closed port to fail", i), 10*time.Second, func() bool {
				return strings.HasPrefix(last(i), "failed: ")
			})
			continue
		}
		rx, err := net.ListenPacket("udp", addr)
		if err != nil {
			t.Fatal(err)
		}
		s.Send(n)
		buf := make([]byte, 4096)
		_ = rx.SetReadDeadline(time.Now().Add(10 * time.Second))
		k, _, err := rx.ReadFrom(buf)
		rx.Close()
		if err != nil {
			t.Fatalf("trap %d did not arrive while the receiver listened: %v", i, err)
		}
		if p, err := (&gosnmp.GoSNMP{}).SnmpDecodePacket(buf[:k]); err != nil || p.Variables[1].Value != "."+base.String()+".0.40" {
			t.Fatalf("trap %d: %v %+v", i, err, p)
		}
		testutil.Eventually(t, fmt.Sprintf("trap %d to be reported", i), 10*time.Second, func() bool { return last(i) != "" })
	}
	s.Close() // the reports are all in
	mu.Lock()
	defer mu.Unlock()
	for i := uint32(1); i <= 2*rounds; i++ {
		r := results[i]
		switch {
		case i%2 == 1 && (len(r) != 2 || r[0] != "sent" || !strings.Contains(r[1], "connection refused")):
			t.Errorf("trap %d, to the closed port: reports %q, want sent then failed: connection refused", i, r)
		case i%2 == 0 && (len(r) != 1 || r[0] != "sent"):
			t.Errorf("trap %d, received: reports %q, want sent only", i, r)
		}
	}
	if c := s.Counts(); c.Sent != 2*rounds || c.Failed != rounds || c.Down != 1 {
		t.Errorf("counts %+v, want %d sent, %d of them failed, the destination down", c, 2*rounds, rounds)
	}
	// A trap sent says nothing of the receiver: down until one outlives
	// its wait for an ICMP error (10 s), so logged down once, never up.
	if f, u := strings.Count(logs.String(), "trap destination failing"), strings.Count(logs.String(), "reachable again"); f != 1 || u != 0 {
		t.Errorf("logged failing %d and reachable again %d times, want once and never:\n%s", f, u, logs.String())
	}
}
