package spmi

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/spmiwire"
)

// Pages of any size, taken one after another from the last entry's
// relative id, list what one whole listing does, to the depth asked.
func TestPeekPagesAddUpToTheListing(t *testing.T) {
	b := NewBuilder(testBase, nil, time.Now())
	cpu, err := b.Context(nil, &cpuCx)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 25 {
		c, err := b.Instance(cpu, &cpuInst, fmt.Sprintf("cpu%d", i), "", uint32(i+1))
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Stat(c, &idle, spmiwire.Uint(uint64(i))); err != nil {
			t.Fatal(err)
		}
	}
	s := b.Finish()
	paths := func(es []spmiwire.Entry) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.Path)
		}
		return out
	}
	for _, depth := range []int{0, 1, 2} {
		whole, more, err := PeekPage(s, "CPU", depth, "", 0)
		if err != nil || more {
			t.Fatal(err, more)
		}
		if want := map[int]int{0: 51, 1: 26, 2: 51}[depth]; len(whole) != want {
			t.Fatalf("depth %d: %d entries, want %d: %v", depth, len(whole), want, paths(whole))
		}
		for _, limit := range []int{1, 3, 7, 50} {
			var got []spmiwire.Entry
			from := ""
			for pages := 0; ; pages++ {
				if pages > 100 {
					t.Fatal("no end")
				}
				page, more, err := PeekPage(s, "CPU", depth, from, limit)
				if err != nil || len(page) > limit || (more && len(page) != limit) {
					t.Fatalf("depth %d limit %d: page of %d, more %v, %v", depth, limit, len(page), more, err)
				}
				got = append(got, page...)
				if !more {
					break
				}
				from = page[len(page)-1].Rel
			}
			if !slices.Equal(paths(got), paths(whole)) {
				t.Errorf("depth %d limit %d: pages list\n%v\nthe listing\n%v", depth, limit, paths(got), paths(whole))
			}
		}
	}
}
