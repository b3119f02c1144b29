package asn1tree

import "testing"

func TestJoinServesBothInOrder(t *testing.T) {
	mk := func(oids ...string) View {
		var es []Entry[Value]
		for i, o := range oids {
			es = append(es, Entry[Value]{OID: MustParse(o), Val: Int(int32(i))})
		}
		tr, err := Build(es)
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	j := Join(mk("1.1", "1.3", "3.1"), mk("2.1", "2.2"))
	var got []string
	o := MustParse("0")
	for i := 0; i < 10; i++ {
		n, _, ok := j.Search(o, false, nil)
		if !ok {
			break
		}
		got = append(got, n.String())
		o = n
	}
	if want := "1.1 1.3 2.1 2.2 3.1"; joinStr(got) != want {
		t.Errorf("walk %s, want %s", joinStr(got), want)
	}
	if v, ok := j.Get(MustParse("2.2")); !ok || v.Num != 1 {
		t.Errorf("Get 2.2 = %v %v", v, ok)
	}
	if _, _, ok := j.Search(MustParse("1.3"), false, MustParse("2.1")); ok {
		t.Error("Search went past its end")
	}
	if !Defines(j, MustParse("2.3")) || Defines(j, MustParse("5.1")) {
		t.Error("Defines")
	}
}

func joinStr(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out
}
