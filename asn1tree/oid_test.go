package asn1tree

import (
	"math/rand"
	"sort"
	"strings"
	"testing"
)

func TestParseFormatRoundTrip(t *testing.T) {
	for _, s := range []string{"1.3.6.1.4.1.32473.1", "0", "1.1.4", "4294967295.0"} {
		o, err := Parse(s)
		if err != nil {
			t.Fatalf("Parse(%q): %v", s, err)
		}
		if o.String() != s {
			t.Errorf("Parse(%q).String() = %q", s, o)
		}
	}
	if o, err := Parse(".1.3.6"); err != nil || o.String() != "1.3.6" {
		t.Errorf("leading dot: %v %v", o, err)
	}
}

func TestParseErrorsNameTheProblem(t *testing.T) {
	cases := map[string]string{
		"":                              "empty",
		"1..2":                          `sub-identifier 2 ("")`,
		"1.x":                           `sub-identifier 2 ("x")`,
		"1.4294967296":                  "4294967295",
		"1.-1":                          `("-1")`,
		strings.Repeat("1.", 128) + "1": "at most 128",
	}
	for in, want := range cases {
		_, err := Parse(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) error = %v, want it to mention %q", in, err, want)
		}
	}
}

func TestCompareIsNumericNotTextual(t *testing.T) {
	a, b := MustParse("1.2.9"), MustParse("1.2.10")
	if Compare(a, b) != -1 || Compare(b, a) != 1 {
		t.Fatal("1.2.9 must sort before 1.2.10")
	}
	if Compare(MustParse("1.2"), MustParse("1.2.0")) != -1 {
		t.Fatal("a prefix sorts first")
	}
	if Compare(a, a.Clone()) != 0 || !a.Equal(a.Clone()) {
		t.Fatal("equal OIDs")
	}
	if !MustParse("1.2.3").HasPrefix(MustParse("1.2")) || MustParse("1.2").HasPrefix(MustParse("1.2.3")) {
		t.Fatal("HasPrefix")
	}
}

func TestAppendDoesNotAlias(t *testing.T) {
	base := make(OID, 2, 10)
	base[0], base[1] = 1, 3
	x := base.Append(5)
	y := base.Append(7)
	if x.String() != "1.3.5" || y.String() != "1.3.7" {
		t.Fatalf("Append aliased: %v %v", x, y)
	}
}

func randomOIDs(r *rand.Rand, n int) []OID {
	seen := map[string]bool{}
	var out []OID
	for len(out) < n {
		o := make(OID, 1+r.Intn(6))
		for i := range o {
			o[i] = uint32(r.Intn(12))
		}
		if !seen[o.String()] {
			seen[o.String()] = true
			out = append(out, o)
		}
	}
	return out
}

// The tree must agree with a brute-force scan of a sorted list, with and
// without a prefix shared by every entry.
func TestTreeAgreesWithLinearScan(t *testing.T) {
	for _, prefix := range []OID{nil, MustParse("1.3.6.1.4.1.32473.1")} {
		checkAgainstScan(t, prefix)
	}
}

func checkAgainstScan(t *testing.T, prefix OID) {
	r := rand.New(rand.NewSource(1))
	oids := randomOIDs(r, 500)
	for i := range oids {
		oids[i] = prefix.Append(oids[i]...)
	}
	entries := make([]Entry[int], len(oids))
	for i, o := range oids {
		entries[i] = Entry[int]{OID: o, Val: i}
	}
	tr, err := Build(entries)
	if err != nil {
		t.Fatal(err)
	}
	sorted := append([]OID(nil), oids...)
	sort.Slice(sorted, func(i, j int) bool { return Compare(sorted[i], sorted[j]) < 0 })
	for q := 0; q < 2000; q++ {
		probe := randomOIDs(r, 1)[0]
		switch q % 4 {
		case 0:
			probe = oids[r.Intn(len(oids))]
		case 1:
			probe = prefix.Append(probe...)
		case 2:
			// Shorter than, beside or diverging from the shared prefix.
			if len(prefix) > 0 {
				probe = prefix[:r.Intn(len(prefix)+1)].Append(probe...)
			}
		}
		var want OID
		for _, o := range sorted {
			if Compare(o, probe) > 0 {
				want = o
				break
			}
		}
		got, v, ok := tr.GetNext(probe)
		if (want == nil) != !ok || (ok && !got.Equal(want)) {
			t.Fatalf("GetNext(%v) = %v %v, want %v", probe, got, ok, want)
		}
		if ok && !oids[v].Equal(got) {
			t.Fatalf("GetNext(%v) value belongs to %v", probe, oids[v])
		}
		_, exact := tr.Get(probe)
		isMember := false
		for _, o := range oids {
			if o.Equal(probe) {
				isMember = true
			}
		}
		if exact != isMember {
			t.Fatalf("Get(%v) found=%v, member=%v", probe, exact, isMember)
		}
	}
}

func TestSearchRange(t *testing.T) {
	tr, _ := Build([]Entry[string]{
		{MustParse("1.1.1.0"), "a"}, {MustParse("1.1.2.0"), "b"}, {MustParse("1.2.1.0"), "c"},
	})
	if o, v, ok := tr.Search(MustParse("1.1.1.0"), true, nil); !ok || v != "a" || o.String() != "1.1.1.0" {
		t.Errorf("inclusive start: %v %v %v", o, v, ok)
	}
	if _, v, ok := tr.Search(MustParse("1.1.1.0"), false, nil); !ok || v != "b" {
		t.Errorf("exclusive start: %v %v", v, ok)
	}
	if _, _, ok := tr.Search(MustParse("1.1.2.0"), false, MustParse("1.2")); ok {
		t.Error("entry at or beyond end must not be returned")
	}
	if _, v, ok := tr.Search(MustParse("1.1.2.0"), false, MustParse("1.2.1.1")); !ok || v != "c" {
		t.Errorf("entry below end: %v %v", v, ok)
	}
	if _, _, ok := tr.Search(MustParse("1.2.1.0"), false, nil); ok {
		t.Error("past the last entry")
	}
	var walked []string
	tr.Walk(MustParse("1.1.2"), MustParse("1.3"), func(_ OID, v string) bool { walked = append(walked, v); return true })
	if strings.Join(walked, ",") != "b,c" {
		t.Errorf("Walk = %v", walked)
	}
}

func TestBuildRefusesDuplicates(t *testing.T) {
	_, err := Build([]Entry[int]{{MustParse("1.2"), 1}, {MustParse("1.2"), 2}})
	if err == nil || !strings.Contains(err.Error(), "1.2") {
		t.Fatalf("duplicate not refused: %v", err)
	}
}
