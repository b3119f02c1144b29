package agentx

import (
	"net"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/internal/snmpdtest"
)

// snmpWait is the daemon's shipped refresh.snmp_wait: the longest a
// request waits for fresh values.
const snmpWait = 500 * time.Millisecond

// slowView is a provider made slow: reading an entry under slow (a DDS
// supplier holding its batch, a context read with the request) takes
// until the test releases it, at most snmpWait.
type slowView struct {
	asn1tree.View
	slow    asn1tree.OID
	entered chan<- struct{} // told when a read starts waiting
	release <-chan struct{}
}

func (v slowView) wait(o asn1tree.OID) {
	if !o.HasPrefix(v.slow) {
		return
	}
	select {
	case v.entered <- struct{}{}:
	default:
	}
	t := time.NewTimer(snmpWait)
	defer t.Stop()
	select {
	case <-v.release:
	case <-t.C:
	}
}

func (v slowView) Get(o asn1tree.OID) (asn1tree.Value, bool) {
	v.wait(o)
	return v.View.Get(o)
}

// A PDU that waits for slow values delays no other PDU of the session:
// through a real snmpd, a second manager's Get of another context is
// answered within 20 ms while the first manager's Get still waits, and
// the first is answered once its values come.
func TestIntegrationSlowReadDelaysNoOtherPDU(t *testing.T) {
	s := snmpdtest.Start(t, snmpdtest.Options{})
	tree := confTree(t)
	slow := cb("20") // the table's context
	entered := make(chan struct{}, 1)
	release := make(chan struct{})
	view := slowView{View: tree, slow: slow, entered: entered, release: release}
	startSourceOn(t, nil, Config{Address: s.AgentXAddress, ID: asn1tree.MustParse("1.3.6.1.4.1.32473.99"),
		Description: "head-of-line", Subtrees: []asn1tree.OID{confBase}},
		asn1tree.Latest(func() asn1tree.View { return view }))
	addr, err := net.ResolveUDPAddr("udp", s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	first, second := gosnmpTo(t, addr, s.Community), gosnmpTo(t, addr, s.Community)
	waitGet(t, second, cb("1.0"))

	type answer struct {
		p   *gosnmp.SnmpPacket
		err error
		at  time.Time
	}
	slowDone := make(chan answer, 1)
	go func() {
		p, err := first.Get([]string{cb("20.1.3.2").String()})
		slowDone <- answer{p, err, time.Now()}
	}()
	select {
	case <-entered:
	case <-time.After(ioTimeout):
		t.Fatal("the first manager's Get never reached the slow values")
	}
	begin := time.Now()
	p, err := second.Get([]string{cb("2.0").String(), cb("5.0").String()})
	took := time.Since(begin)
	if err != nil || len(p.Variables) != 2 || string(p.Variables[0].Value.([]byte)) != "two" || p.Variables[1].Value != uint(5) {
		t.Fatalf("the second manager's Get: %v %v", p, err)
	}
	select {
	case a := <-slowDone:
		t.Fatalf("the slow Get was answered (%v) before the second one: nothing waited", a.err)
	default:
	}
	if took >= 20*time.Millisecond {
		t.Errorf("the second manager's Get took %v while the first waited, want < 20ms", took)
	}
	answered := time.Now()
	close(release)
	a := <-slowDone
	if a.err != nil || len(a.p.Variables) != 1 || string(a.p.Variables[0].Value.([]byte)) != "r2" {
		t.Fatalf("the first manager's Get: %v %v", a.p, a.err)
	}
	t.Logf("second Get answered in %v; the first %v after it, once released", took, a.at.Sub(answered))
}

// waitGet waits, bounded, until g's Get of o is served.
func waitGet(t *testing.T, g *gosnmp.GoSNMP, o asn1tree.OID) {
	t.Helper()
	testutil.Eventually(t, "the master to serve "+o.String(), servedWithin, func() bool {
		p, err := g.Get([]string{o.String()})
		return err == nil && len(p.Variables) == 1 && p.Variables[0].Type != gosnmp.NoSuchObject
	})
}
