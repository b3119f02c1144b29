package responder

import (
	"bytes"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/gosnmp/gosnmp"

	"github.com/perfagent/subagent/usm"
)

// v3Seeds are requests of users at their own level (so that a message
// whose flags a mutation lowers gets authorizationError, not values).
func v3Seeds(t testing.TB) (*Responder, [][]byte) {
	cs := []usm.Credentials{testCreds("a", "SHA256", "AES"), testCreds("b", "SHA", ""), testCreds("c", "SHA512", "AES256C")}
	var users []User
	for _, c := range cs {
		u := testUser(t, c)
		u.MinLevel = AuthNoPriv
		if c.PrivPass != "" {
			u.MinLevel = AuthPriv
		}
		users = append(users, u)
	}
	r, _ := v3Responder(t, users...)
	var seeds [][]byte
	for _, c := range cs {
		seeds = append(seeds, v3Packet(t, c, 7, 0, gosnmp.GetRequest, base+".1.4.0", base+".1.3.0"),
			v3Packet(t, c, 7, 0, gosnmp.GetBulkRequest, base))
	}
	probe := &gosnmp.SnmpPacket{Version: gosnmp.Version3, MsgFlags: gosnmp.Reportable, SecurityModel: gosnmp.UserSecurityModel,
		SecurityParameters: &gosnmp.UsmSecurityParameters{Logger: gosnmp.NewLogger(nil)}, PDUType: gosnmp.GetRequest, MsgMaxSize: 65507}
	b, err := probe.MarshalMsg()
	if err != nil {
		t.Fatal(err)
	}
	return r, append(seeds, b)
}

// valuesAnswered tells whether handling pkt sent values: a response
// without an error status (authorizationError and Reports carry none).
func valuesAnswered(r *Responder, pkt []byte, s *scratch) ([]byte, bool) {
	before, denied := r.stats.OutGetResponses.Load(), r.stats.OutAuthorizationErrors.Load()
	out := r.handle(pkt, s)
	return out, r.stats.OutGetResponses.Load()-before > r.stats.OutAuthorizationErrors.Load()-denied
}

// FuzzHandleV3 feeds mutated v3 messages to the handler: no panic, a
// reason for every drop, and values only for a message as it was signed.
func FuzzHandleV3(f *testing.F) {
	r, seeds := v3Seeds(f)
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, pkt []byte) {
		var s scratch
		out, values := valuesAnswered(r, pkt, &s)
		if out == nil && s.why == nil {
			t.Fatal("dropped without a reason")
		}
		if values && !isSeed(seeds, pkt) {
			t.Fatalf("values answered to a message no user signed: % x", pkt)
		}
	})
}

func isSeed(seeds [][]byte, pkt []byte) bool {
	for _, s := range seeds {
		if bytes.Equal(s, pkt) {
			return true
		}
	}
	return false
}

// mutate changes pkt a little: flipped or replaced octets, a cut, an
// inserted octet, a length made huge.
func mutate(rng *rand.Rand, pkt []byte) []byte {
	p := append([]byte(nil), pkt...)
	for range 1 + rng.IntN(3) {
		i := rng.IntN(len(p))
		switch rng.IntN(5) {
		case 0:
			p[i] ^= 1 << rng.IntN(8)
		case 1:
			p[i] = byte(rng.IntN(256))
		case 2:
			p = p[:i]
		case 3:
			p = append(p[:i], append([]byte{byte(rng.IntN(256))}, p[i:]...)...)
		default:
			p[i] = []byte{0x84, 0xff, 0x00, 0x80}[rng.IntN(4)]
		}
		if len(p) == 0 {
			p = append(p, 0x30)
		}
	}
	return p
}

// rss is this process's resident set in bytes.
func rss(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

// 100,000 mutated v3 messages: no panic, values only for an unchanged
// message, and the resident set within 5 MB of what it was.
func TestV3MutatedPackets(t *testing.T) {
	n := 100000
	if testing.Short() {
		n = 5000
	}
	r, seeds := v3Seeds(t)
	var s scratch
	for _, p := range seeds { // grow the scratch; the seeds are answered
		for range 100 {
			r.handle(p, &s)
		}
	}
	runtime.GC()
	before := rss(t)
	rng := rand.New(rand.NewPCG(32, 3414))
	answered := 0
	for i := range n {
		p := mutate(rng, seeds[i%len(seeds)])
		out, values := valuesAnswered(r, p, &s)
		if values && !isSeed(seeds, p) {
			t.Fatalf("packet %d: values answered to a mutated message: % x", i, p)
		}
		if out != nil {
			answered++
		}
	}
	runtime.GC()
	after := rss(t)
	t.Logf("%d mutated messages, %d answered (Reports, authorizationError); wrong digests %d, parse errors %d; RSS %d -> %d kB",
		n, answered, r.stats.WrongDigests.Load(), r.stats.InASNParseErrs.Load(), before>>10, after>>10)
	if after-before > 5<<20 {
		t.Errorf("RSS grew by %d kB", (after-before)>>10)
	}
	if r.stats.WrongDigests.Load() == 0 {
		t.Error("no mutation reached the digest check")
	}
}
