package ddswire_test

import (
	"testing"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/ddswire/ddswiretest"
	"github.com/perfagent/subagent/client/spmierr"
)

func TestLiveFields(t *testing.T) {
	b := ddswiretest.GoodFile()
	s0, err := ddswire.LoadStamp(b)
	if err != nil || s0 != (ddswire.Stamp{}) {
		t.Fatalf("stamp %v, %v", s0, err)
	}
	copy(b[ddswire.OffT:], []byte{1, 0, 0, 0, 0, 0, 0, 0, 2})
	if s, _ := ddswire.LoadStamp(b); s != (ddswire.Stamp{1, 2}) {
		t.Fatalf("stamp %v", s)
	}
	if g, _ := ddswire.LoadGoAway(b); g {
		t.Fatal("GoAway set")
	}
	if err := ddswire.SetGoAway(b); err != nil {
		t.Fatal(err)
	}
	if err := ddswire.StoreInterval(b, 2500); err != nil {
		t.Fatal(err)
	}
	if err := ddswire.StoreSubscrib(b, 12); err != nil {
		t.Fatal(err)
	}
	if err := ddswire.StoreGen(b, 99); err != nil {
		t.Fatal(err)
	}
	h := ddswire.DecodeHeader(b)
	if h.GoAway != 1 || h.Interval != 2500 || h.Subscrib != 12 || h.Gen != 99 {
		t.Fatalf("header %+v", h)
	}
	if g, _ := ddswire.LoadGoAway(b); !g {
		t.Fatal("GoAway not seen")
	}
	if g, _ := ddswire.LoadGen(b); g != 99 {
		t.Fatalf("gen %d", g)
	}
	ddswiretest.WantErr(t, ddswire.StoreGen(b, 0), spmierr.SiBadArgument, "unpublished")

	short := b[:64]
	_, err = ddswire.LoadStamp(short)
	ddswiretest.WantErr(t, err, spmierr.SiBadArgument, "outside the 64-byte mapping")
	ddswiretest.WantErr(t, ddswire.SetGoAway(short), spmierr.SiBadArgument, "outside")
	_, err = ddswire.LoadGoAway(short)
	ddswiretest.WantErr(t, err, spmierr.SiBadArgument, "outside")
	_, err = ddswire.LoadGen(b[:36])
	ddswiretest.WantErr(t, err, spmierr.SiBadArgument, "outside")
	ddswiretest.WantErr(t, ddswire.StoreGen(b[:36], 1), spmierr.SiBadArgument, "outside")
	_, err = ddswire.LoadGen(b[4:])
	ddswiretest.WantErr(t, err, spmierr.SiShmemFailed, "aligned")
}
