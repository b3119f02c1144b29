package ddswire

import (
	"testing"

	"github.com/perfagent/subagent/client/spmierr"
)

func TestLiveFields(t *testing.T) {
	b := goodFile()
	s0, err := LoadStamp(b)
	if err != nil || s0 != (Stamp{}) {
		t.Fatalf("stamp %v, %v", s0, err)
	}
	copy(b[OffT:], []byte{1, 0, 0, 0, 0, 0, 0, 0, 2})
	if s, _ := LoadStamp(b); s != (Stamp{1, 2}) {
		t.Fatalf("stamp %v", s)
	}
	if g, _ := LoadGoAway(b); g {
		t.Fatal("GoAway set")
	}
	if err := SetGoAway(b); err != nil {
		t.Fatal(err)
	}
	if err := StoreInterval(b, 2500); err != nil {
		t.Fatal(err)
	}
	if err := StoreSubscrib(b, 12); err != nil {
		t.Fatal(err)
	}
	if err := StoreGen(b, 99); err != nil {
		t.Fatal(err)
	}
	h := DecodeHeader(b)
	if h.GoAway != 1 || h.Interval != 2500 || h.Subscrib != 12 || h.Gen != 99 {
		t.Fatalf("header %+v", h)
	}
	if g, _ := LoadGoAway(b); !g {
		t.Fatal("GoAway not seen")
	}
	if g, _ := LoadGen(b); g != 99 {
		t.Fatalf("gen %d", g)
	}
	wantErr(t, StoreGen(b, 0), spmierr.SiBadArgument, "unpublished")

	short := b[:64]
	_, err = LoadStamp(short)
	wantErr(t, err, spmierr.SiBadArgument, "outside the 64-byte mapping")
	wantErr(t, SetGoAway(short), spmierr.SiBadArgument, "outside")
	_, err = LoadGoAway(short)
	wantErr(t, err, spmierr.SiBadArgument, "outside")
	_, err = LoadGen(b[:36])
	wantErr(t, err, spmierr.SiBadArgument, "outside")
	wantErr(t, StoreGen(b[:36], 1), spmierr.SiBadArgument, "outside")
	_, err = LoadGen(b[4:])
	wantErr(t, err, spmierr.SiShmemFailed, "aligned")
}
