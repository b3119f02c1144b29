package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	client "github.com/perfagent/subagent/client/ddsclient"
	"github.com/perfagent/subagent/internal/snmpdtest"
)

// guideSupplier registers the SPMI guide's first sample (DDS/IBM/Test with
// gadgets and widgets, DDS/IBM/Moretest/SubTest with level and queue) with
// the daemon of e and sets the sample's first values.
func guideSupplier(t *testing.T, e *env) *client.Supplier {
	t.Helper()
	v := client.NewVendor("IBM", "IBM-defined Dynamic Data-Suppliers", 2)
	test := v.Context("Test", "Bogus Context Number 1", 220)
	gadgets := test.Counter("gadgets", "Fake counter value", 1, client.Range(0, 100))
	widgets := test.Counter("widgets", "Another fake counter value", 2, client.Range(0, 100))
	sub := v.Context("Moretest", "Bogus Context Number 2", 221).Context("SubTest", "Bogus Context Number 3", 222)
	level := sub.Gauge("level", "Fake quantity value", 1, client.Range(0, 100))
	queue := sub.Gauge("queue", "Another fake quantity value", 2, client.Range(0, 100))
	s, err := client.Start(v, filepath.Join(t.TempDir(), "SpmiSupl1SHM"), &client.Options{Socket: filepath.Join(e.runDir, "dds.sock")})
	if err != nil {
		t.Fatalf("supplier: %v", err)
	}
	s.Update(func() { gadgets.Set(22); widgets.Set(42); level.Set(28); queue.Set(62) })
	return s
}

func TestSupplierValuesThroughGetPeekAndSnmpd(t *testing.T) {
	s := snmpdtest.Start(t, snmpdtest.Options{})
	e := newEnv(t)
	e.start("--agentx", s.AgentXAddress)
	waitServed(t, s, idleOID, 10*time.Second)

	sup := guideSupplier(t, e)
	exited := false
	defer func() {
		if !exited {
			sup.Exit()
		}
	}()

	// The reply to Init has come back: the very next read sees the
	// supplier, whatever the snapshot's age.
	out, stderr, code := e.run(append([]string{"get", "DDS/IBM/Test/gadgets", "DDS/IBM/Moretest/SubTest/level"}, e.args()...)...)
	if code != 0 {
		t.Fatalf("get: %s", stderr)
	}
	for _, want := range []string{"22", "28"} {
		if !strings.Contains(out, " "+want) {
			t.Errorf("get printed\n%s\nwant the value %s", out, want)
		}
	}
	out, _, _ = e.run(append([]string{"peek", "--oid", "DDS/"}, e.args()...)...)
	for _, want := range []string{"DDS/IBM/Test/widgets", "99.2.220.2", "DDS/IBM/Moretest/SubTest/queue", "99.2.221.222.2"} {
		if !strings.Contains(out, want) {
			t.Errorf("peek DDS/ lacks %q:\n%s", want, out)
		}
	}

	vars, err := s.Get(base+".99.2.220.1.0", base+".99.2.220.2.0", base+".99.2.221.222.1.0", base+".99.2.221.222.2.0")
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"22", "42", "28", "62"} {
		if vars[i].Value != want {
			t.Errorf("snmpget %s = %s %s, want %s", vars[i].OID, vars[i].Type, vars[i].Value, want)
		}
	}

	// Exit removes the supplier's contexts at once; SNMP requests, which
	// never wait for a rebuild (refresh.snmp_wait 0), see it gone as soon
	// as the rebuild it starts has published.
	if err := sup.Exit(); err != nil {
		t.Fatal(err)
	}
	exited = true
	out, _, _ = e.run(append([]string{"peek", "DDS/"}, e.args()...)...)
	if strings.Contains(out, "DDS/IBM/") {
		t.Fatalf("after Exit peek still lists the supplier:\n%s", out)
	}
	waitFor(t, s, base+".99.2.220.1.0", false, 2*time.Second)
}
