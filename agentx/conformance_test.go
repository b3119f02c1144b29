package agentx

// The conformance suite of the SNMP read rules (package snmpreq): the same
// cases against every front end. "udp" is the standalone responder over
// UDP, "snmpd" this package's Subagent behind a real net-snmp snmpd, both
// asked by gosnmp; "agentx" is the Subagent asked with AgentX GetNext and
// GetBulk PDUs by this package's fake master, since snmpd never forwards a
// GetBulk (it asks one GetNext per repetition): only there does the
// Subagent's own GetBulk answer.

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/internal/snmpdtest"
	snmpresponder "github.com/perfagent/subagent/responder"
	"github.com/perfagent/subagent/snmpreq"
)

// confBase is the served subtree; every case names OIDs below it.
var confBase = asn1tree.MustParse("1.3.6.1.4.1.32473.77")

func cb(s string) asn1tree.OID { return asn1tree.MustParse(confBase.String() + "." + s) }

// bigValue is the size of column 30's strings: three fit in an answer of
// 64 KiB (either front end's limit), four do not.
const bigValue = 20000

// confTree: scalars of four kinds, a 4-row table, then column 30 of
// eight big strings, the last entries served.
func confTree(t testing.TB) *asn1tree.Tree[asn1tree.Value] {
	t.Helper()
	e := []asn1tree.Entry[asn1tree.Value]{
		{OID: cb("1.0"), Val: asn1tree.Int(1)},
		{OID: cb("2.0"), Val: asn1tree.Str("two")},
		{OID: cb("3.0"), Val: asn1tree.Counter(3 << 40)},
		{OID: cb("5.0"), Val: asn1tree.Gauge(5)},
	}
	for r := 1; r <= 4; r++ {
		e = append(e, asn1tree.Entry[asn1tree.Value]{OID: cb(fmt.Sprintf("20.1.2.%d", r)), Val: asn1tree.Int(int32(r))},
			asn1tree.Entry[asn1tree.Value]{OID: cb(fmt.Sprintf("20.1.3.%d", r)), Val: asn1tree.Str(fmt.Sprintf("r%d", r))})
	}
	for r := 1; r <= 8; r++ {
		e = append(e, asn1tree.Entry[asn1tree.Value]{OID: cb(fmt.Sprintf("30.1.%d", r)), Val: asn1tree.Str(strings.Repeat(fmt.Sprint(r), bigValue))})
	}
	tree, err := asn1tree.Build(e)
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// confSource serves the tree at moments it counts: a request answered
// without a new one went on with a walk.
type confSource struct {
	tree  *asn1tree.Tree[asn1tree.Value]
	mu    sync.Mutex
	fresh int
}

type confMoment struct{ n int }

func (s *confSource) Source(at any) (asn1tree.View, any) {
	if m, ok := at.(*confMoment); ok {
		return s.tree, m
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fresh++
	return s.tree, &confMoment{s.fresh}
}

func (s *confSource) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fresh
}

// confCase is one request; names and want are relative to confBase, want
// as "OID=Type:value" or "OID=endOfMibView" (big strings as "big:digit").
type confCase struct {
	name   string
	op     snmpreq.Op
	nr, mr int
	names  []string
	want   []string
	err    string // "tooBig", or "" for noError
	// before is asked first, fresh is how many new moments the case's own
	// request may make (-1: not checked).
	before *confCase
	fresh  int
	// bulk: the case needs the front end to answer the GetBulk itself,
	// which through snmpd it never does (snmpd answers GetBulk from
	// GetNexts of its own, under its own caps and size limits: 120
	// repeaters get an empty answer from net-snmp 5.9).
	bulk bool
}

func confCases() []confCase {
	// More repeaters than the responder's cap (100): the first
	// repetition is whole all the same.
	var manyNames, manyWant []string
	for range 120 {
		manyNames = append(manyNames, "20.1.3.3")
		manyWant = append(manyWant, "20.1.3.4=OctetString:r4")
	}
	walk1 := &confCase{op: snmpreq.GetBulk, mr: 2, names: []string{"20.1.2"}}
	rowsAfter3 := []string{"20.1.2.4=Integer:4", "20.1.3.4=OctetString:r4",
		"20.1.3.1=OctetString:r1", "30.1.1=big:1",
		"20.1.3.2=OctetString:r2", "30.1.2=big:2"}
	return []confCase{
		{name: "GetNext at an object", op: snmpreq.GetNext, names: []string{"1.0"}, want: []string{"2.0=OctetString:two"}, fresh: -1},
		{name: "GetNext between objects", op: snmpreq.GetNext, names: []string{"4"}, want: []string{"5.0=Gauge32:5"}, fresh: -1},
		{name: "GetNext below an instance", op: snmpreq.GetNext, names: []string{"2.0.7"}, want: []string{"3.0=Counter64:3298534883328"}, fresh: -1},
		{name: "GetNext before the view", op: snmpreq.GetNext, names: []string{"0"}, want: []string{"1.0=Integer:1"}, fresh: -1},
		{name: "GetNext after a column", op: snmpreq.GetNext, names: []string{"20.1.2.4"}, want: []string{"20.1.3.1=OctetString:r1"}, fresh: -1},
		{name: "GetNext at the end of the view", op: snmpreq.GetNext, names: []string{"30.1.8"}, want: []string{"30.1.8=endOfMibView"}, fresh: -1},
		{name: "GetNext of several, one past the end", op: snmpreq.GetNext, names: []string{"30.1.8", "1.0", "20.1.3.3"},
			want: []string{"30.1.8=endOfMibView", "2.0=OctetString:two", "20.1.3.4=OctetString:r4"}, fresh: -1},

		{name: "GetBulk max-repetitions 0, non-repeaters 0: nothing", op: snmpreq.GetBulk, names: []string{"1.0", "2.0"}, fresh: -1},
		{name: "GetBulk max-repetitions 0: the non-repeaters only", op: snmpreq.GetBulk, nr: 1, names: []string{"1.0", "2.0"},
			want: []string{"2.0=OctetString:two"}, fresh: -1},
		{name: "GetBulk max-repetitions 1", op: snmpreq.GetBulk, mr: 1, names: []string{"1.0", "20.1.2"},
			want: []string{"2.0=OctetString:two", "20.1.2.1=Integer:1"}, fresh: -1},
		{name: "GetBulk first repetition after one non-repeater", op: snmpreq.GetBulk, nr: 1, mr: 3, names: []string{"1.0", "20.1.2", "20.1.3"},
			want: []string{"2.0=OctetString:two",
				"20.1.2.1=Integer:1", "20.1.3.1=OctetString:r1",
				"20.1.2.2=Integer:2", "20.1.3.2=OctetString:r2",
				"20.1.2.3=Integer:3", "20.1.3.3=OctetString:r3"}, fresh: -1},
		{name: "GetBulk non-repeaters beyond the varbinds", op: snmpreq.GetBulk, nr: 5, mr: 3, names: []string{"1.0", "2.0"},
			want: []string{"2.0=OctetString:two", "3.0=Counter64:3298534883328"}, fresh: -1},
		{name: "GetBulk non-repeaters as many as the varbinds", op: snmpreq.GetBulk, nr: 2, mr: 3, names: []string{"1.0", "20.1.3.4"},
			want: []string{"2.0=OctetString:two", "30.1.1=big:1"}, fresh: -1},
		{name: "GetBulk repeaters reaching the end stay at endOfMibView", op: snmpreq.GetBulk, mr: 3, names: []string{"20.1.2.3", "30.1.7"},
			want: []string{"20.1.2.4=Integer:4", "30.1.8=big:8",
				"20.1.3.1=OctetString:r1", "30.1.8=endOfMibView",
				"20.1.3.2=OctetString:r2", "30.1.8=endOfMibView"}, fresh: -1},
		{name: "GetBulk a repetition all endOfMibView is the last", op: snmpreq.GetBulk, mr: 5, names: []string{"30.1.8"},
			want: []string{"30.1.8=endOfMibView"}, fresh: -1},
		{name: "GetBulk repeaters go on into the next columns", op: snmpreq.GetBulk, mr: 3, names: []string{"20.1.2.3", "20.1.3.3"},
			want: rowsAfter3, fresh: -1},

		{name: "GetBulk first repetition whole beyond the varbind cap", op: snmpreq.GetBulk, mr: 1, names: manyNames,
			want: manyWant, fresh: -1, bulk: true},

		{name: "GetBulk cut by size after the last varbind that fits", op: snmpreq.GetBulk, mr: 8, names: []string{"30"},
			want: []string{"30.1.1=big:1", "30.1.2=big:2", "30.1.3=big:3"}, fresh: -1, bulk: true},
		{name: "GetBulk first repetition cut by size", op: snmpreq.GetBulk, nr: 1, mr: 2, names: []string{"20.1.3.4", "30.1.1", "30.1.2", "30.1.3", "30.1.4"},
			want: []string{"30.1.1=big:1", "30.1.2=big:2", "30.1.3=big:3"}, fresh: -1, bulk: true},
		{name: "GetBulk non-repeaters too big", op: snmpreq.GetBulk, nr: 4, mr: 2, names: []string{"20.1.3.4", "30.1.1", "30.1.2", "30.1.3"},
			err: "tooBig", fresh: -1, bulk: true},

		// A walk goes on from where the last response ended: found by the
		// first repeater, not by the non-repeater (from where no walk ended).
		{name: "GetBulk goes on with the walk of its first repeater", op: snmpreq.GetBulk, nr: 1, mr: 2, names: []string{"1", "20.1.2.2"},
			before: walk1, want: []string{"1.0=Integer:1", "20.1.2.3=Integer:3", "20.1.2.4=Integer:4"}, fresh: 0, bulk: true},
		{name: "GetNext goes on with a walk", op: snmpreq.GetNext, names: []string{"20.1.2.2"},
			before: walk1, want: []string{"20.1.2.3=Integer:3"}, fresh: 0},
		{name: "GetNext from where no walk ended starts one", op: snmpreq.GetNext, names: []string{"2.0.7"},
			before: walk1, want: []string{"3.0=Counter64:3298534883328"}, fresh: 1},
	}
}

// confTarget asks one front end.
type confTarget interface {
	ask(t *testing.T, c *confCase) (vbs []string, err string)
	bulkPDUs() bool // the front end answers GetBulk itself
}

func TestConformance(t *testing.T) {
	targets := []struct {
		name  string
		start func(t *testing.T, src *confSource) confTarget
	}{{"udp", startUDPTarget}, {"snmpd", startSnmpdTarget}, {"agentx", startWireTarget}}
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			src := &confSource{tree: confTree(t)}
			target := tg.start(t, src)
			var notAsked []string
			for _, c := range confCases() {
				// snmpd never forwards a GetBulk (it asks one GetNext per
				// repetition, non-repeaters first, under its own caps and
				// size limits): a case about the front end's own GetBulk
				// is not asked of it; the agentx target asks it with
				// AgentX GetBulk PDUs.
				if c.bulk && !target.bulkPDUs() {
					notAsked = append(notAsked, c.name)
					continue
				}
				t.Run(c.name, func(t *testing.T) {
					if c.before != nil {
						if _, err := target.ask(t, c.before); err != "" {
							t.Fatalf("the request before: %s", err)
						}
					}
					n := src.count()
					got, err := target.ask(t, &c)
					if err != c.err || strings.Join(got, " ") != strings.Join(c.want, " ") {
						t.Errorf("%s nr=%d mr=%d %v answered (%s)\n %s\nwant (%s)\n %s", opName(c.op), c.nr, c.mr, c.names,
							or(err, "noError"), strings.Join(got, " "), or(c.err, "noError"), strings.Join(c.want, " "))
					}
					if fresh := src.count() - n; c.fresh >= 0 && fresh != c.fresh {
						t.Errorf("answered from %d new moments, want %d", fresh, c.fresh)
					}
				})
			}
			if len(notAsked) > 0 {
				t.Logf("not asked of %s, which receives no GetBulk (the agentx target asks them): %s", tg.name, strings.Join(notAsked, "; "))
			}
		})
	}
}

func opName(op snmpreq.Op) string {
	if op == snmpreq.GetBulk {
		return "GetBulk"
	}
	return "GetNext"
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// confVar formats one varbind: relative name, type, value.
func confVar(name asn1tree.OID, typ, val string) string {
	rel := name.String()
	if name.HasPrefix(confBase) && len(name) > len(confBase) {
		rel = name[len(confBase):].String()
	}
	if typ == "endOfMibView" {
		return rel + "=" + typ
	}
	if typ == "OctetString" && len(val) == bigValue {
		return rel + "=big:" + val[:1]
	}
	return rel + "=" + typ + ":" + val
}

// snmpTarget asks with gosnmp: the responder, or snmpd.
type snmpTarget struct {
	g    *gosnmp.GoSNMP
	bulk bool
}

func (s *snmpTarget) bulkPDUs() bool { return s.bulk }

func (s *snmpTarget) ask(t *testing.T, c *confCase) ([]string, string) {
	t.Helper()
	oids := make([]string, len(c.names))
	for i, n := range c.names {
		oids[i] = cb(n).String()
	}
	var p *gosnmp.SnmpPacket
	var err error
	if c.op == snmpreq.GetBulk {
		p, err = s.g.GetBulk(oids, uint8(c.nr), uint32(c.mr))
	} else {
		p, err = s.g.GetNext(oids)
	}
	if err != nil {
		t.Fatalf("%s: %v", opName(c.op), err)
	}
	if p.Error != gosnmp.NoError {
		if p.Error == gosnmp.TooBig {
			return nil, "tooBig"
		}
		return nil, p.Error.String()
	}
	var out []string
	for _, v := range p.Variables {
		name := asn1tree.MustParse(strings.TrimPrefix(v.Name, "."))
		switch v.Type {
		case gosnmp.Integer:
			out = append(out, confVar(name, "Integer", fmt.Sprint(v.Value)))
		case gosnmp.OctetString:
			out = append(out, confVar(name, "OctetString", string(v.Value.([]byte))))
		case gosnmp.Counter64:
			out = append(out, confVar(name, "Counter64", fmt.Sprint(v.Value)))
		case gosnmp.Gauge32:
			out = append(out, confVar(name, "Gauge32", fmt.Sprint(v.Value)))
		case gosnmp.EndOfMibView:
			out = append(out, confVar(name, "endOfMibView", ""))
		default:
			out = append(out, confVar(name, v.Type.String(), fmt.Sprint(v.Value)))
		}
	}
	return out, ""
}

func gosnmpTo(t *testing.T, addr *net.UDPAddr, community string) *gosnmp.GoSNMP {
	t.Helper()
	g := &gosnmp.GoSNMP{Target: addr.IP.String(), Port: uint16(addr.Port), Community: community,
		Version: gosnmp.Version2c, Timeout: 2 * time.Second, Retries: 1, MaxOids: 200}
	if err := g.Connect(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Conn.Close() })
	return g
}

// startUDPTarget runs the standalone responder on a loopback port.
func startUDPTarget(t *testing.T, src *confSource) confTarget {
	r, err := snmpresponder.NewWithSource(snmpresponder.Config{Listen: "127.0.0.1:0", Community: "public",
		MaxMsgSize: snmpresponder.MaxMsgSizeCap}, src.Source, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("responder Run: %v", err)
			}
		case <-time.After(ioTimeout):
			t.Errorf("responder Run did not return within %v", ioTimeout)
		}
	})
	select {
	case <-r.Ready():
	case err := <-done:
		t.Fatalf("responder Run: %v", err)
	case <-time.After(ioTimeout):
		t.Fatal("responder not ready")
	}
	return &snmpTarget{g: gosnmpTo(t, r.Addr().(*net.UDPAddr), "public"), bulk: true}
}

// confCommunity reads only confBase through snmpd, so that past it the
// master answers endOfMibView as the responder does.
const confCommunity = "conformance"

// startSnmpdTarget runs snmpd and a Subagent serving src behind it.
func startSnmpdTarget(t *testing.T, src *confSource) confTarget {
	s := snmpdtest.Start(t, snmpdtest.Options{ExtraConfig: []string{
		"rocommunity " + confCommunity + " 127.0.0.1 ." + confBase.String()}})
	startSourceOn(t, nil, Config{Address: s.AgentXAddress, ID: asn1tree.MustParse("1.3.6.1.4.1.32473.99"),
		Description: "conformance", Subtrees: []asn1tree.OID{confBase}}, src.Source)
	addr, err := net.ResolveUDPAddr("udp", s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	target := &snmpTarget{g: gosnmpTo(t, addr, confCommunity)}
	waitGet(t, target.g, cb("1.0"))
	return target
}

// wireTarget asks the Subagent with AgentX PDUs, as a master would.
type wireTarget struct {
	c   *masterConn
	tid uint32
}

func (w *wireTarget) bulkPDUs() bool { return true }

func (w *wireTarget) ask(t *testing.T, c *confCase) ([]string, string) {
	t.Helper()
	w.c.t = t
	w.tid++
	p := &packet{header: header{typ: typeGetNext, flags: flagNetworkByteOrder, transactionID: w.tid}}
	if c.op == snmpreq.GetBulk {
		p.typ, p.nonRepeaters, p.maxRepetitions = typeGetBulk, uint16(c.nr), uint16(c.mr)
	}
	for _, n := range c.names {
		p.ranges = append(p.ranges, searchRange{start: cb(n)})
	}
	r := w.c.ask(p)
	if r.resError != NoError {
		if r.resError == TooBig {
			return nil, "tooBig"
		}
		return nil, r.resError.String()
	}
	var out []string
	for _, v := range r.varbinds {
		switch v.typ {
		case vbInteger:
			out = append(out, confVar(v.name, "Integer", fmt.Sprint(int32(uint32(v.num)))))
		case vbOctetString:
			out = append(out, confVar(v.name, "OctetString", v.str))
		case vbCounter64:
			out = append(out, confVar(v.name, "Counter64", fmt.Sprint(v.num)))
		case vbGauge32:
			out = append(out, confVar(v.name, "Gauge32", fmt.Sprint(v.num)))
		case vbEndOfMibView:
			out = append(out, confVar(v.name, "endOfMibView", ""))
		default:
			out = append(out, confVar(v.name, v.typ.String(), ""))
		}
	}
	return out, ""
}

// startWireTarget runs a Subagent against the fake master on a Unix socket.
func startWireTarget(t *testing.T, src *confSource) confTarget {
	m := newFakeMaster(t)
	cfg := testConfig(m.addr)
	cfg.Subtrees = []asn1tree.OID{confBase}
	startSourceOn(t, m, cfg, src.Source)
	c := m.accept()
	c.handshake(cfg)
	return &wireTarget{c: c}
}
