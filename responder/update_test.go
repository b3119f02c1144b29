package responder

import (
	"testing"

	"github.com/gosnmp/gosnmp"
)

// Update switches the community and the limits from the next request on:
// the old community is refused, the new one answered, GetBulk is cut at
// the new MaxRepetitions; a bad update changes nothing.
func TestUpdateSwitchesCommunityAndLimits(t *testing.T) {
	r := newTestResponder(t, Config{Community: "old"})
	bulk := func(community string) []byte {
		return reqPacket(t, gosnmp.Version2c, community, gosnmp.GetBulkRequest, 0, 50, base)
	}
	if p := ask(t, r, bulk("old")); len(p.Variables) < 10 {
		t.Fatalf("before Update: %d varbinds", len(p.Variables))
	}
	if err := r.Update(Config{Community: "new", MaxRepetitions: 3}); err != nil {
		t.Fatal(err)
	}
	var s scratch
	if out := r.handle(bulk("old"), &s); out != nil || s.why != errCommunity {
		t.Fatalf("the old community after Update: answered %v (%v)", out != nil, s.why)
	}
	if p := ask(t, r, bulk("new")); len(p.Variables) != 3 {
		t.Fatalf("GetBulk after Update answered %d varbinds, want 3", len(p.Variables))
	}
	if err := Check(Config{Community: ""}); err == nil {
		t.Fatal("Check accepted an empty community")
	}
	if err := r.Update(Config{Community: "x", MaxMsgSize: 100}); err == nil {
		t.Fatal("Update accepted a 100-byte message size")
	}
	if p := ask(t, r, bulk("new")); len(p.Variables) != 3 {
		t.Fatalf("a refused Update changed the settings: %d varbinds", len(p.Variables))
	}
}
