package snmpreq

import (
	"fmt"
	"strings"
	"testing"

	"github.com/perfagent/subagent/asn1tree"
)

// listAnswer answers from a sorted list of single-arc OIDs 1..n; a varbind
// of OID bad cannot be encoded, and at most room varbinds fit.
type listAnswer struct {
	n, bad, room int
	cur          []int
	out          []string
}

func (a *listAnswer) Next(i int) (asn1tree.OID, bool, bool) {
	o := a.cur[i] + 1
	if o > a.n {
		a.out = append(a.out, fmt.Sprintf("%d:end", a.cur[i]))
		return nil, false, true
	}
	if o == a.bad {
		return nil, true, false
	}
	a.cur[i] = o
	a.out = append(a.out, fmt.Sprint(o))
	return asn1tree.OID{uint32(o)}, true, true
}

func (a *listAnswer) End(i int)     { a.out = append(a.out, fmt.Sprintf("%d:end", a.cur[i])) }
func (a *listAnswer) Mark() int     { return len(a.out) }
func (a *listAnswer) Undo(mark int) { a.out = a.out[:mark] }
func (a *listAnswer) Fits() bool    { return a.room == 0 || len(a.out) <= a.room }

// The rules beside what the conformance suite asks through the front
// ends: the SNMPv1 GetNext past the end, genErr's index, the cap and the
// size limit, and the names where the walk goes on.
func TestRules(t *testing.T) {
	for _, c := range []struct {
		name      string
		q         Request
		from      []int
		n, bad    int
		room      int // varbinds that fit; 0: all, -1: none
		want, err string
		names     string
	}{
		{name: "v2c GetNext past the end", q: Request{Op: GetNext, N: 2}, from: []int{3, 5}, n: 5,
			want: "4 5:end", names: "4"},
		{name: "v1 GetNext past the end is noSuchName", q: Request{Op: GetNext, N: 2, V1: true}, from: []int{3, 5}, n: 5,
			err: "{3 1}"},
		{name: "genErr names the varbind", q: Request{Op: GetBulk, N: 2, NonRepeaters: 1, MaxRepetitions: 3}, from: []int{0, 1}, n: 9, bad: 3,
			err: "{2 1}"},
		{name: "the cap cuts anywhere", q: Request{Op: GetBulk, N: 3, MaxRepetitions: 5, MaxVarBinds: 4}, from: []int{0, 2, 4}, n: 9,
			want: "1 3 5 2", names: "1 3 5 2"},
		{name: "the cap never cuts the first repetition", q: Request{Op: GetBulk, N: 3, MaxRepetitions: 5, MaxVarBinds: 2}, from: []int{0, 2, 4}, n: 9,
			want: "1 3 5", names: "1 3 5"},
		{name: "the size cuts anywhere after the non-repeaters", q: Request{Op: GetBulk, N: 3, NonRepeaters: 1, MaxRepetitions: 5}, from: []int{0, 2, 4}, n: 9, room: 2,
			want: "1 3", names: "1 3"},
		{name: "nothing fits: tooBig", q: Request{Op: GetBulk, N: 1, MaxRepetitions: 5}, from: []int{0}, n: 9, room: -1,
			err: "{1 0}"},
		{name: "negative fields count as 0", q: Request{Op: GetBulk, N: 2, NonRepeaters: -1, MaxRepetitions: -1}, from: []int{0, 1}, n: 9},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := &listAnswer{n: c.n, bad: c.bad, room: max(c.room, 0), cur: c.from}
			var ans Answer = a
			if c.room < 0 {
				ans = tight{a}
			}
			var s Scratch
			res := s.Serve(ans, &c.q)
			var names []string
			for _, o := range s.Names() {
				names = append(names, o.String())
			}
			got, gotErr := strings.Join(a.out, " "), ""
			if res.Err != NoError {
				got, gotErr = "", fmt.Sprint(res)
			}
			if got != c.want || gotErr != c.err || res.Err == NoError && strings.Join(names, " ") != c.names {
				t.Errorf("answered %q %s names %v, want %q %s names %q", got, gotErr, names, c.want, c.err, c.names)
			}
		})
	}
}

// tight is an answer where nothing fits.
type tight struct{ *listAnswer }

func (tight) Fits() bool { return false }

func TestFirst(t *testing.T) {
	items := []string{"a", "b", "c"}
	for _, c := range []struct {
		op   Op
		nr   int
		want string
		ok   bool
	}{{GetNext, 2, "a", true}, {GetBulk, 0, "a", true}, {GetBulk, 1, "b", true}, {GetBulk, 9, "c", true}, {GetBulk, -1, "a", true}, {Get, 0, "", false}} {
		if got, ok := First(c.op, items, c.nr); got != c.want || ok != c.ok {
			t.Errorf("First(%d, nr %d) = %q %v, want %q %v", c.op, c.nr, got, ok, c.want, c.ok)
		}
	}
	if _, ok := First(GetNext, []string(nil), 0); ok {
		t.Error("First of no items")
	}
}
