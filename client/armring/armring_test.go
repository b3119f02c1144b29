package armring

import (
	"strings"
	"sync"
	"testing"
)

func TestKeyFollowsTheGuide(t *testing.T) {
	for in, want := range map[string]string{
		"Checking Account Query": "CheckingAccountQuery",
		"Last Check Query":       "LastCheckQuery",
		"Check if any check of this account has bounced during the past 12 months": "Checkifanycheckofthisaccounthas",
		"a/b\x01c": "a_b_c",
		"":         "",
	} {
		if got := Key(in); got != want {
			t.Errorf("Key(%q) = %q, want %q", in, got, want)
		}
	}
	if got := Key(strings.Repeat("é", 20)); len(got) != 30 {
		t.Errorf("Key cut %q inside a character (%d bytes)", got, len(got))
	}
	if got := Descr(strings.Repeat("x", 100), MaxDescr); len(got) != 63 {
		t.Errorf("Descr kept %d bytes, want 63", len(got))
	}
}

func testFile(t testing.TB, g Geometry) *File {
	t.Helper()
	mem := make([]byte, g.FileLen()+8)
	mem = mem[8-int(uintptrOf(mem)%8):][:g.FileLen()]
	f, err := NewFile(mem, g)
	if err != nil {
		t.Fatal(err)
	}
	h := Header{Geometry: g, Gen: 7, PID: 42}
	h.Encode(mem)
	f.InitSlots()
	return f
}

func TestHeaderRoundTripAndRefusals(t *testing.T) {
	g := Geometry{Slots: 64, Apps: 4, Trans: 8}
	f := testFile(t, g)
	h, err := DecodeHeader(f.Bytes(), g.FileLen())
	if err != nil || h.Geometry != g || h.Gen != 7 || h.PID != 42 {
		t.Fatalf("DecodeHeader = %+v, %v", h, err)
	}
	if _, err := DecodeHeader(f.Bytes(), g.FileLen()+8); err == nil || !strings.Contains(err.Error(), "file length") {
		t.Errorf("wrong file length: %v", err)
	}
	b := append([]byte(nil), f.Bytes()[:HeaderLen]...)
	b[OffSlots] = 63
	if _, err := DecodeHeader(b, g.FileLen()); err == nil || !strings.Contains(err.Error(), "power of two") {
		t.Errorf("63 slots: %v", err)
	}
}

func TestEntriesRoundTrip(t *testing.T) {
	f := testFile(t, Geometry{Slots: 16, Apps: 2, Trans: 2})
	var ab [AppLen]byte
	if f.AppEntry(1, &ab) {
		t.Fatal("unpublished entry read")
	}
	a := App{ID: 9, Key: "CheckingAccountQuery", Descr: "Checking Account Query"}
	f.PublishApp(1, &a)
	if !f.AppEntry(1, &ab) {
		t.Fatal("published entry not read")
	}
	if got, err := DecodeApp(ab[:]); err != nil || got != a {
		t.Fatalf("DecodeApp = %+v, %v", got, err)
	}
	tr := Tran{App: 1, ID: 77, Key: "LastCheckQuery", Descr: "Last Check Query", Detail: "first",
		Types: [7]uint32{Counter32, 0, Gauge64, 0, 0, 0, String32}, Names: [7]string{"bytes", "", "queue", "", "", "", "part"}}
	f.PublishTran(0, &tr)
	var tb [TranLen]byte
	f.TranEntry(0, &tb)
	if got, err := DecodeTran(tb[:]); err != nil || got != tr {
		t.Fatalf("DecodeTran = %+v, %v", got, err)
	}
	tb[tranOffTypes] = 10 // String32 in a metric field
	if _, err := DecodeTran(tb[:]); err == nil || !strings.Contains(err.Error(), "field 1: type 10") {
		t.Errorf("bad type: %v", err)
	}
	copy(tb[tranOffKey:], "a b\x00")
	if _, err := DecodeTran(tb[:]); err == nil || !strings.Contains(err.Error(), "not a key") {
		t.Errorf("bad key: %v", err)
	}
}

func TestRingDeliversEveryRecordOnceInOrderPerProducer(t *testing.T) {
	f := testFile(t, Geometry{Slots: 1024, Apps: 1, Trans: 8})
	const producers, each = 4, 5000
	var wg sync.WaitGroup
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				r := Record{Tran: uint32(p), Dur: uint64(i)}
				for !f.Post(&r) {
					// full: the test's consumer catches up
				}
			}
		}()
	}
	next := make([]uint64, producers)
	var tail uint64
	total := 0
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for total < producers*each {
		tail = f.Drain(tail, 256, func(b []byte) {
			r, err := DecodeRecord(b)
			if err != nil {
				t.Fatal(err)
			}
			if r.Dur != next[r.Tran] {
				t.Fatalf("producer %d: record %d after %d", r.Tran, r.Dur, next[r.Tran])
			}
			next[r.Tran]++
			total++
		})
	}
	<-done
	if tail != producers*each || f.Head() != tail {
		t.Fatalf("tail %d head %d, want %d", tail, f.Head(), producers*each)
	}
}

func TestFullRingRefusesAndUndrainedCounts(t *testing.T) {
	f := testFile(t, Geometry{Slots: 16, Apps: 1, Trans: 2})
	posted := 0
	for i := range 20 {
		if f.Post(&Record{Tran: uint32(i % 2)}) {
			posted++
		}
	}
	if posted != 16 {
		t.Fatalf("posted %d into 16 slots", posted)
	}
	per := map[uint32]int{}
	f.Undrained(func(tr uint32) { per[tr]++ })
	if per[0] != 8 || per[1] != 8 {
		t.Fatalf("undrained %v, want 8 and 8", per)
	}
	tail := f.Drain(0, 5, func([]byte) {})
	per = map[uint32]int{}
	f.Undrained(func(tr uint32) { per[tr]++ })
	if tail != 5 || per[0]+per[1] != 11 {
		t.Fatalf("after draining 5: tail %d undrained %v", tail, per)
	}
	f.AddInflight(1, 3)
	f.AddInflight(1, -1)
	f.AddDropped(1, 4)
	if in, dr := f.Counters(1); in != 2 || dr != 4 {
		t.Fatalf("counters %d %d", in, dr)
	}
}

func TestRecordChecks(t *testing.T) {
	var b [RecordLen]byte
	r := Record{Tran: 3, Status: Abort, Flags: FlagParent, Mask: 0x41, Dur: 12345, ParentTran: 5, ParentInst: 6, ParentAgent: 7, ParentVendor: 8}
	r.Values[0] = 99
	copy(r.Str[:], "part 1")
	r.encode(b[:])
	if got, err := DecodeRecord(b[:]); err != nil || got != r {
		t.Fatalf("DecodeRecord = %+v, %v", got, err)
	}
	b[recOffStatus] = 3
	if _, err := DecodeRecord(b[:]); err == nil || !strings.Contains(err.Error(), "status 3") {
		t.Errorf("status 3: %v", err)
	}
}

func TestMessagesRoundTrip(t *testing.T) {
	h := Hello{Version: Version, PID: 123, Prog: "sample"}
	typ, body, err := ReadFrame(strings.NewReader(string(h.Marshal())))
	if err != nil || typ != MsgHello {
		t.Fatal(typ, err)
	}
	if got, err := DecodeHello(body); err != nil || got != h {
		t.Fatalf("DecodeHello = %+v, %v", got, err)
	}
	w := Welcome{Gen: 5, Geometry: Geometry{Slots: 32, Apps: 2, Trans: 3}}
	_, body, _ = ReadFrame(strings.NewReader(string(w.Marshal())))
	if got, err := DecodeWelcome(body); err != nil || got != w {
		t.Fatalf("DecodeWelcome = %+v, %v", got, err)
	}
	if _, err := DecodeHello(append(body[:0:0], 1, 0, 0, 0)); err == nil || !strings.Contains(err.Error(), "version 1") {
		t.Errorf("version 1: %v", err)
	}
}
