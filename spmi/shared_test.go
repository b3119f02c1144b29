package spmi

import (
	"testing"
	"time"
)

func TestSharedReadsOncePerBuilder(t *testing.T) {
	reads := 0
	read := func() (int, error) { reads++; return 42, nil }
	b := NewBuilder(testBase, nil, time.Now())
	for i := 0; i < 3; i++ {
		if v, err := Shared(b, "/proc/stat", read); v != 42 || err != nil {
			t.Fatalf("%v %v", v, err)
		}
	}
	if _, err := Shared(b, "/proc/stat", func() (string, error) { return "", nil }); err == nil {
		t.Fatal("a source read as two types is an error")
	}
	Shared(NewBuilder(testBase, nil, time.Now()), "/proc/stat", read)
	if reads != 2 {
		t.Fatalf("%d reads for two builders", reads)
	}
}

// RTime/LAN and RTime/ARM share one RTime context, whichever collects
// first, and the hierarchy collects them in one group.
func TestRTimeIsOneContextForBothProviders(t *testing.T) {
	under := func(name string, asn uint32) namedFunc {
		return namedFunc{name: name, f: func(b *Builder) error {
			rt, err := b.RTime()
			if err != nil {
				return err
			}
			_, err = b.Context(rt, &CxDesc{Name: name[len("RTime/"):], ASN: asn})
			return err
		}}
	}
	h := NewHierarchy(Config{Base: testBase})
	h.Add(under("RTime/LAN", ASNRTimeLAN))
	h.Add(under("RTime/ARM", ASNRTimeARM))
	s := h.Refresh()
	rt, err := s.Lookup("RTime")
	if err != nil {
		t.Fatal(err)
	}
	if rt.ASN != ASNRTime || rt.Descr != RTimeCx.Descr || rt.NumChildren() != 2 {
		t.Fatalf("RTime: ASN %d, %q, %d children; want %d, %q and both providers' contexts", rt.ASN, rt.Descr, rt.NumChildren(), ASNRTime, RTimeCx.Descr)
	}
	for _, p := range []string{"RTime/LAN", "RTime/ARM"} {
		if _, err := s.Lookup(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}
