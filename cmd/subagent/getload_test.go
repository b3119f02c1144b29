package main

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/internal/snmpdtest"
)

// maxAttackP99 bounds the 99th percentile of SNMP GETs to the standalone
// responder while a local user attacks (issue 26: 150 ms to 1.5 s before
// the per-user bounds; a few ms with them, under 25 ms with -race and both
// processors of a 2-core host busy; docs/SECURITY.md has the figures).
const maxAttackP99 = 50 * time.Millisecond

// attackP99Bound is maxAttackP99 on a machine that ran no more than one
// runnable task per processor before the attack; on one that other work
// already keeps busier (a CI neighbour, stress loops), the bound grows by
// that ratio, up to 4 times, and the test says so: the attack must not be
// what slows a manager down, which a busy machine does by itself.
func attackP99Bound(t *testing.T) time.Duration {
	t.Helper()
	b, err := os.ReadFile("/proc/loadavg")
	var load float64
	if err == nil {
		fmt.Sscanf(string(b), "%f", &load)
	}
	ratio := load / float64(runtime.NumCPU())
	if ratio <= 1 {
		return maxAttackP99
	}
	ratio = min(ratio, 4)
	bound := time.Duration(float64(maxAttackP99) * ratio)
	t.Logf("the machine was busy before the attack (load %.2f on %d processors): p99 bound %v instead of %v", load, runtime.NumCPU(), bound, maxAttackP99)
	return bound
}

// getLoad sends SNMP GETs of one counter to the standalone responder one
// after another, in the background, to measure what an attack does to a
// manager.
type getLoad struct {
	oid  string
	mu   sync.Mutex
	took []time.Duration
	errs []error
	stop chan struct{}
	done chan struct{}
}

// snmpClient is a client of the standalone responder at 127.0.0.1:port.
func snmpClient(t *testing.T, port int, community string) *gosnmp.GoSNMP {
	t.Helper()
	g := &gosnmp.GoSNMP{Target: "127.0.0.1", Port: uint16(port), Community: community,
		Version: gosnmp.Version2c, Timeout: 5 * time.Second, Retries: 0}
	if err := g.Connect(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Conn.Close() })
	return g
}

// sampleGets starts the GETs of oid through g until end.
func sampleGets(g *gosnmp.GoSNMP, oid string) *getLoad {
	l := &getLoad{oid: oid, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(l.done)
		for {
			select {
			case <-l.stop:
				return
			default:
			}
			t0 := time.Now()
			p, err := g.Get([]string{"." + oid})
			d := time.Since(t0)
			if err == nil && (len(p.Variables) != 1 || p.Variables[0].Type != gosnmp.Counter64 && p.Variables[0].Type != gosnmp.Counter32) {
				err = fmt.Errorf("GET %s answered %+v", oid, p.Variables)
			}
			l.mu.Lock()
			l.took = append(l.took, d)
			if err != nil {
				l.errs = append(l.errs, err)
			}
			l.mu.Unlock()
		}
	}()
	return l
}

// count is the number of GETs answered or failed so far.
func (l *getLoad) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.took)
}

// end stops the GETs and returns the median, the 99th percentile and
// their number; a failed GET fails the test.
func (l *getLoad) end(t *testing.T, during string) (p50, p99 time.Duration, n int) {
	t.Helper()
	close(l.stop)
	<-l.done
	if len(l.errs) > 0 {
		t.Errorf("%d of %d SNMP GETs failed during %s, first: %v", len(l.errs), len(l.took), during, l.errs[0])
	}
	s := slices.Clone(l.took)
	slices.Sort(s)
	if len(s) == 0 {
		t.Fatalf("no SNMP GET during %s", during)
	}
	return s[len(s)/2], s[len(s)*99/100], len(s)
}

// managers are the two ways a manager reads the daemon during an attack:
// the standalone responder, and a real snmpd it is attached to (AgentX).
type managers struct {
	snmpd                *snmpdtest.Snmpd
	standalone, viaSnmpd *gosnmp.GoSNMP
	standalonePort       int
}

// startManagers starts snmpd (community perf) and picks the standalone
// responder's port; args are the daemon's flags for both, and attach
// makes the clients once the daemon serves.
func startManagers(t *testing.T) (*managers, []string) {
	t.Helper()
	m := &managers{snmpd: snmpdtest.Start(t, snmpdtest.Options{Community: "perf"}), standalonePort: snmpdtest.FreeUDPPort(t)}
	return m, []string{"--agentx", m.snmpd.AgentXAddress, "--listen", fmt.Sprintf("127.0.0.1:%d", m.standalonePort), "--community", "perf"}
}

// attach waits until both serve oid and makes their clients.
func (m *managers) attach(t *testing.T, oid string) {
	t.Helper()
	waitServed(t, m.snmpd, oid, 20*time.Second)
	m.standalone = snmpClient(t, m.standalonePort, "perf")
	_, port, _ := strings.Cut(m.snmpd.Addr, ":")
	n, _ := strconv.Atoi(port)
	m.viaSnmpd = snmpClient(t, n, "perf")
}

// loads are GETs through both at once, and the p99 they must keep.
type loads struct {
	standalone, viaSnmpd *getLoad
	bound                time.Duration
}

func (m *managers) sample(t *testing.T, oid string) loads {
	return loads{sampleGets(m.standalone, oid), sampleGets(m.viaSnmpd, oid), attackP99Bound(t)}
}

func (l loads) count() int { return min(l.standalone.count(), l.viaSnmpd.count()) }

// end stops both and fails the test when either's 99th percentile passes
// its bound; it returns the figures for the log.
func (l loads) end(t *testing.T, during string) string {
	t.Helper()
	var out []string
	for _, g := range []struct {
		name string
		l    *getLoad
	}{{"standalone", l.standalone}, {"through snmpd", l.viaSnmpd}} {
		p50, p99, n := g.l.end(t, during)
		out = append(out, fmt.Sprintf("%s %d GETs p50 %v p99 %v", g.name, n, p50, p99))
		if p99 > l.bound {
			t.Errorf("SNMP GETs %s during %s: p99 %v, over %v", g.name, during, p99, l.bound)
		}
	}
	return strings.Join(out, "; ")
}

// quietGets measures n GETs before an attack, for the log.
func quietGets(t *testing.T, g *gosnmp.GoSNMP, oid string, n int) (p50, p99 time.Duration) {
	t.Helper()
	l := sampleGets(g, oid)
	testutil.Eventually(t, fmt.Sprintf("%d SNMP GETs before the attack", n), time.Minute, func() bool { return l.count() >= n })
	p50, p99, _ = l.end(t, "the quiet time before")
	return p50, p99
}
