package responder

import (
	"strings"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/perfagent/subagent/asn1tree"
)

const sysPrefix = "1.3.6.1.2.1.1"

func testSystem() *System {
	return &System{Descr: "subagent 9.9 Linux test", ObjectID: oid(base), Contact: "ops@example.org",
		Name: "host1", Location: "rack 4", ORDescr: "SUBAGENT-MIB: SPMI statistics"}
}

// sysResponder serves the fixture with the system group, sysUpTime on a
// clock 12.34 s after start.
func sysResponder(t testing.TB, cfg Config) *Responder {
	t.Helper()
	cfg.System = testSystem()
	r := newTestResponder(t, cfg)
	r.now = func() time.Time { return r.start.Add(12345 * time.Millisecond) }
	return r
}

// sysWant is the system group as the responder serves it, in OID order.
func sysWant() []asn1tree.Entry[asn1tree.Value] {
	b := oid(base)
	oidv := func(o asn1tree.OID) asn1tree.Value { return asn1tree.Value{Kind: asn1tree.ObjectIdentifier, OID: o} }
	tt := func(n uint64) asn1tree.Value { return asn1tree.Value{Kind: asn1tree.TimeTicks, Num: n} }
	s := testSystem()
	return []asn1tree.Entry[asn1tree.Value]{
		{OID: oid(sysPrefix + ".1.0"), Val: asn1tree.Str(s.Descr)},
		{OID: oid(sysPrefix + ".2.0"), Val: oidv(b)},
		{OID: oid(sysPrefix + ".3.0"), Val: tt(1234)},
		{OID: oid(sysPrefix + ".4.0"), Val: asn1tree.Str(s.Contact)},
		{OID: oid(sysPrefix + ".5.0"), Val: asn1tree.Str(s.Name)},
		{OID: oid(sysPrefix + ".6.0"), Val: asn1tree.Str(s.Location)},
		{OID: oid(sysPrefix + ".7.0"), Val: asn1tree.Int(72)},
		{OID: oid(sysPrefix + ".8.0"), Val: tt(0)},
		{OID: oid(sysPrefix + ".9.1.2.1"), Val: oidv(b)},
		{OID: oid(sysPrefix + ".9.1.3.1"), Val: asn1tree.Str(s.ORDescr)},
		{OID: oid(sysPrefix + ".9.1.4.1"), Val: tt(0)},
	}
}

// Every object of the system group answers a Get in v1 and v2c, with
// sysObjectID and sysORID the base OID and sysUpTime from the clock.
func TestSystemGroupGet(t *testing.T) {
	r := sysResponder(t, Config{})
	want := sysWant()
	var oids []string
	for _, e := range want {
		oids = append(oids, e.OID.String())
	}
	for _, ver := range []gosnmp.SnmpVersion{gosnmp.Version1, gosnmp.Version2c} {
		p := ask(t, r, reqPacket(t, ver, "public", gosnmp.GetRequest, 0, 0, oids...))
		if p.Error != gosnmp.NoError || len(p.Variables) != len(want) {
			t.Fatalf("%v Get: %v, %d varbinds", ver, p.Error, len(p.Variables))
		}
		for i, e := range want {
			checkVarBind(t, p.Variables[i], e)
		}
	}
	// Without System the group is not there (under AgentX snmpd serves its own).
	plain := newTestResponder(t, Config{})
	p := ask(t, plain, reqPacket(t, gosnmp.Version2c, "public", gosnmp.GetRequest, 0, 0, sysPrefix+".1.0"))
	if p.Variables[0].Type != gosnmp.NoSuchObject {
		t.Errorf("sysDescr without System: %v", p.Variables[0].Type)
	}
}

// GetNext goes through the system group and on into the snmp group in OID
// order, in v1 too; GetBulk crosses from one to the other.
func TestSystemGroupGetNextAndBulk(t *testing.T) {
	r := sysResponder(t, Config{})
	want := sysWant()
	first := asn1tree.Entry[asn1tree.Value]{OID: oid("1.3.6.1.2.1.11.1.0"), Val: asn1tree.Value{Kind: asn1tree.Counter32, Num: 1}}
	for _, ver := range []gosnmp.SnmpVersion{gosnmp.Version1, gosnmp.Version2c} {
		p := ask(t, r, reqPacket(t, ver, "public", gosnmp.GetNextRequest, 0, 0, "1.3.6.1", sysPrefix+".9.1.4.1", sysPrefix+".2.0"))
		if p.Error != gosnmp.NoError || len(p.Variables) != 3 {
			t.Fatalf("%v GetNext: %v", ver, p.Error)
		}
		checkVarBind(t, p.Variables[0], want[0])
		first.Val.Num = r.stats.InPkts.Load() // snmpInPkts counts this request
		checkVarBind(t, p.Variables[1], first)
		checkVarBind(t, p.Variables[2], want[2])
	}
	p := ask(t, r, reqPacket(t, gosnmp.Version2c, "public", gosnmp.GetBulkRequest, 0, 3, sysPrefix+".9.1.2.1"))
	if len(p.Variables) != 3 {
		t.Fatalf("GetBulk: %d varbinds", len(p.Variables))
	}
	checkVarBind(t, p.Variables[0], want[9])
	checkVarBind(t, p.Variables[1], want[10])
	first.Val.Num = r.stats.InPkts.Load()
	checkVarBind(t, p.Variables[2], first)
}

// Update switches the system strings from the next request; a string
// that is no DisplayString is refused naming the field.
func TestSystemGroupUpdateAndCheck(t *testing.T) {
	r := sysResponder(t, Config{})
	s := testSystem()
	s.Contact = "night shift"
	if err := r.Update(Config{Community: "public", System: s}); err != nil {
		t.Fatal(err)
	}
	p := ask(t, r, reqPacket(t, gosnmp.Version2c, "public", gosnmp.GetRequest, 0, 0, sysPrefix+".4.0"))
	if v, _ := p.Variables[0].Value.([]byte); string(v) != "night shift" {
		t.Errorf("sysContact after Update: %v", p.Variables[0].Value)
	}
	for field, edit := range map[string]func(*System){
		"contact":  func(s *System) { s.Contact = strings.Repeat("x", 256) },
		"location": func(s *System) { s.Location = "a\x1bb" },
		"name":     func(s *System) { s.Name = "\xff" },
	} {
		bad := testSystem()
		edit(bad)
		if err := Check(Config{Community: "public", System: bad}); err == nil || !strings.Contains(err.Error(), "system "+field+":") {
			t.Errorf("%s: %v", field, err)
		}
	}
	if d := DefaultSysDescr("subagent", "1.2.3"); !strings.HasPrefix(d, "subagent 1.2.3 Linux ") || len(d) > 255 {
		t.Errorf("default sysDescr %q", d)
	}
}

// net-snmp's snmpwalk, v2c and v1, walks from 1.3.6.1 through the system
// group into the tree without a gap or a step back; v1 skips Counter64.
func TestToolsSystemGroupWalk(t *testing.T) {
	r := newTestResponder(t, Config{System: testSystem(), Listen: "127.0.0.1:0"})
	r.now = func() time.Time { return r.start.Add(12345 * time.Millisecond) }
	_, addr := runResponder(t, r)
	for _, v1 := range []bool{false, true} {
		ver := "-v2c"
		if v1 {
			ver = "-v1"
		}
		stdout, stderr, err := runTool(t, "snmpwalk", ver, "-c", "public", "-t", "5", "-r", "0", addr, "1.3.6.1")
		want := append(append(sysWant(), mgmtWant()...), entriesUnder(t, base, v1)...)
		if err := checkWalk(stdout, stderr, err, want); err != nil {
			t.Errorf("snmpwalk %s 1.3.6.1: %v", ver, err)
		}
	}
	stdout, stderr, err := runTool(t, "snmpget", "-v1", "-c", "public", "-t", "5", "-r", "0", addr, sysPrefix+".5.0", base+".1.3.0")
	if err == nil || !strings.Contains(stderr, "(noSuchName)") || !strings.Contains(stderr, "Failed object: ."+base+".1.3.0\n") {
		t.Errorf("v1 Get of sysName and a Counter64: exit %v, %q %q; want noSuchName naming the Counter64", err, stdout, stderr)
	}
}

// Serving the system group in front of the tree allocates nothing per
// request, as the rest of the handler.
func TestSystemGroupAllocatesNothing(t *testing.T) {
	r := sysResponder(t, Config{})
	req := reqPacket(t, gosnmp.Version2c, "public", gosnmp.GetBulkRequest, 0, 20, "1.3.6.1")
	var s scratch
	r.handle(req, &s) // grow the scratch
	if n := testing.AllocsPerRun(100, func() { r.handle(req, &s) }); n != 0 {
		t.Errorf("%v allocations per request", n)
	}
}
