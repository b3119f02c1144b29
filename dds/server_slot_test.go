//go:build linux

package dds

import (
	"strings"
	"testing"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/ddswire/ddswiretest"
	"github.com/perfagent/subagent/client/spmierr"
)

// AddCx with a requested offset: granted exactly when the slot is free,
// aligned and inside the volatile part, refused naming the offset
// otherwise, and the connection stays usable.
func TestServerAddCxAtOffset(t *testing.T) {
	s, h := testServer(t, nil)
	ts := newSupFile(t, ddswiretest.GuideInit()) // permanent part 32, slots of 16
	ts.register(s, spmierr.SiSuccess)
	add := func(name string, asn, off uint32, want spmierr.Code, subs ...string) uint32 {
		t.Helper()
		r := ts.must(&ddswire.AddCx{Path: "DDS/IBM/Moretest/" + name, Descr: "inst", ASN: asn, Offset: off}, -1, want)
		for _, sub := range subs {
			if !strings.Contains(r.Errmsg, sub) {
				t.Fatalf("AddCx %s at %d: %q does not mention %q", name, off, r.Errmsg, sub)
			}
		}
		if want != spmierr.SiSuccess && lookup(h, "DDS/IBM/Moretest/"+name+"/") != nil {
			t.Fatalf("refused %s is served", name)
		}
		return uint32(r.Value)
	}

	// A requested slot is a replay: published with what it holds.
	ts.put(72, 0xdead)
	if got := add("A", 300, 64, spmierr.SiSuccess); got != 64 {
		t.Fatalf("A at %d, asked for 64", got)
	}
	wantNode(t, h, "DDS/IBM/Moretest/A/solutions", "99.2.221.300.2", 0xdead)
	ts.put(72, 5)
	wantNode(t, h, "DDS/IBM/Moretest/A/solutions", "99.2.221.300.2", 5)
	ts.put(40, 0xbeef)
	if got := add("B", 301, 0, spmierr.SiSuccess); got != 32 { // first fit, below A
		t.Fatalf("B at %d, want 32", got)
	}
	wantNode(t, h, "DDS/IBM/Moretest/B/solutions", "99.2.221.301.2", 0) // a new slot is zeroed

	add("C", 302, 72, spmierr.SiCallocFailed, `"DDS/IBM/Moretest/C"`, "offset 72", "in use")
	add("C", 302, 56, spmierr.SiCallocFailed, "offset 56", "in use") // runs into A
	add("C", 302, 36, spmierr.SiBadArgument, "offset 36", "multiple of 8")
	add("C", 302, 16, spmierr.SiBadArgument, "offset 16", "outside the volatile part [32, 65536)")
	add("C", 302, 65528, spmierr.SiBadArgument, "offset 65528 (16 bytes)", "outside")
	if got := add("C", 302, 65520, spmierr.SiSuccess); got != 65520 {
		t.Fatalf("C at %d, asked for 65520", got)
	}

	// A deleted slot can be asked for again.
	ts.must(&ddswire.DelCx{Offset: 64}, -1, spmierr.SiSuccess)
	add("D", 303, 64, spmierr.SiSuccess)
	wantNode(t, h, "DDS/IBM/Moretest/D/solutions", "99.2.221.303.2", 5)
}

// Offset 0 is asked for with AddCxReplay (a slot at 0 exists when the
// permanent part is empty) and kept as it is; without the flag 0 means
// first fit, which zeroes.
func TestServerAddCxReplayAtZero(t *testing.T) {
	s, h := testServer(t, nil)
	in := ddswiretest.GuideInit()
	in.Contexts = in.Contexts[:1] // the vendor context alone: no permanent part
	in.PermLen = 0
	ts := newSupFile(t, in)
	ts.register(s, spmierr.SiSuccess)
	ts.put(8, 41)
	r := ts.must(&ddswire.AddCx{Path: "DDS/IBM/A", ASN: 300, Flags: ddswire.AddCxReplay}, -1, spmierr.SiSuccess)
	if r.Value != 0 {
		t.Fatalf("A at %d, asked for 0", r.Value)
	}
	wantNode(t, h, "DDS/IBM/A/solutions", "99.2.300.2", 41)
	ts.must(&ddswire.AddCx{Path: "DDS/IBM/B", ASN: 301, Flags: ddswire.AddCxReplay}, -1, spmierr.SiCallocFailed)
	ts.put(24, 43)
	if r := ts.must(&ddswire.AddCx{Path: "DDS/IBM/B", ASN: 301}, -1, spmierr.SiSuccess); r.Value != 16 {
		t.Fatalf("B at %d, want 16", r.Value)
	}
	wantNode(t, h, "DDS/IBM/B/solutions", "99.2.301.2", 0)
}

// A daemon restart: the supplier registers with a new daemon and replays
// its contexts at their old offsets, the hole before them included, so
// the values it keeps writing are served where they were.
func TestServerReplayKeepsOffsets(t *testing.T) {
	s, _ := testServer(t, nil)
	ts := newSupFile(t, ddswiretest.GuideInit())
	ts.register(s, spmierr.SiSuccess)
	var offs []uint32
	for i, name := range []string{"A", "B", "C"} {
		r := ts.must(&ddswire.AddCx{Path: "DDS/IBM/Moretest/" + name, ASN: 300 + uint32(i)}, -1, spmierr.SiSuccess)
		offs = append(offs, uint32(r.Value))
	}
	ts.must(&ddswire.DelCx{Offset: offs[0]}, -1, spmierr.SiSuccess) // the hole
	ts.put(offs[2]+8, 33)
	s.Close()
	ts.waitEOF()

	s2, h2 := testServer(t, nil)
	ts.init.Generation++
	if err := ddswire.StoreGen(ts.mem, ts.init.Generation); err != nil {
		t.Fatal(err)
	}
	ts.register(s2, spmierr.SiSuccess)
	for i, name := range []string{"B", "C"} {
		r := ts.must(&ddswire.AddCx{Path: "DDS/IBM/Moretest/" + name, ASN: 301 + uint32(i), Offset: offs[i+1]}, -1, spmierr.SiSuccess)
		if uint32(r.Value) != offs[i+1] {
			t.Fatalf("%s replayed at %d, was %d", name, r.Value, offs[i+1])
		}
	}
	ts.put(offs[2]+8, 34)
	wantNode(t, h2, "DDS/IBM/Moretest/C/solutions", "99.2.221.302.2", 34)
	// The hole is still free: first fit fills it.
	r := ts.must(&ddswire.AddCx{Path: "DDS/IBM/Moretest/D", ASN: 303}, -1, spmierr.SiSuccess)
	if uint32(r.Value) != offs[0] {
		t.Fatalf("D at %d, the hole is at %d", r.Value, offs[0])
	}
}
