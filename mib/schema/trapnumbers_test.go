package schema_test

import (
	"strings"
	"testing"

	"github.com/perfagent/subagent/mib/schema"
)

// The rules every path applies: an alarm's number is its own (no hotset's,
// no other alarm's), none takes the daemon's own notifications or a
// number out of range, and hotsets may share one; a refusal names both.
func TestCheckTrapNumbers(t *testing.T) {
	hot := func(name string, n int) schema.TrapUser {
		return schema.TrapUser{N: n, Kind: "hotset", Name: name, From: "hotsets[0]"}
	}
	alarm := func(name string, n int) schema.TrapUser {
		return schema.TrapUser{N: n, Kind: "alarm", Name: name, From: "alarmDefTable"}
	}
	for _, tc := range []struct {
		what  string
		users []schema.TrapUser
		want  []string // in the error; none: accepted
	}{
		{"hotsets share", []schema.TrapUser{hot("a", 3), hot("b", 3), alarm("c", 4)}, nil},
		{"alarm after hotset", []schema.TrapUser{hot("a", 3), alarm("c", 3)}, []string{"trap number 3", `alarm "c" (alarmDefTable)`, `hotset "a" (hotsets[0])`}},
		{"alarm before hotset", []schema.TrapUser{alarm("c", 5), hot("a", 5)}, []string{"trap number 5", `alarm "c"`, `hotset "a"`}},
		{"two alarms", []schema.TrapUser{alarm("c", 6), alarm("d", 6)}, []string{`alarm "c"`, `alarm "d"`}},
		{"alarmRaised", []schema.TrapUser{alarm("c", 32770)}, []string{`alarm "c"`, "alarmRaised"}},
		{"sloBurnCleared", []schema.TrapUser{hot("a", 32773)}, []string{`hotset "a"`, "sloBurnCleared"}},
		{"zero", []schema.TrapUser{alarm("c", 0)}, []string{"not from 1 to 32767"}},
		{"above", []schema.TrapUser{alarm("c", 40000)}, []string{"not from 1 to 32767"}},
	} {
		err := schema.CheckTrapNumbers(tc.users)
		if len(tc.want) == 0 {
			if err != nil {
				t.Errorf("%s: %v", tc.what, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: accepted", tc.what)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v, want it to name %s", tc.what, err, w)
			}
		}
	}
	for n, name := range schema.OwnTrapNumbers() {
		if n <= schema.MaxTrapNo || name == "" {
			t.Errorf("own notification %s is %d, within the numbers hotsets and alarms choose", name, n)
		}
	}
}
