package agentx

import (
	"testing"

	"github.com/perfagent/subagent/internal/snmpdtest"
)

// Range registrations through net-snmp: OIDs inside the ranges are served
// by us, OIDs beside them are not served at all, and the master accepts
// the ranged Unregister at shutdown.
func TestIntegrationRangeRegistration(t *testing.T) {
	cfg := Config{Registrations: []Registration{
		{Subtree: b("2"), RangeSubID: 9, UpperBound: 4},         // 2.0 to 4.0
		{Subtree: b("20.1.2.5"), RangeSubID: 11, UpperBound: 3}, // row 5 of columns 2 and 3
	}}
	in := startIntegration(t, snmpdtest.Options{}, cfg, nil)
	var inside, want []string
	for _, s := range []string{"2.0", "3.0", "4.0", "20.1.2.5", "20.1.3.5"} {
		inside = append(inside, b(s).String())
		v, _ := in.tree.Get(b(s))
		want = append(want, expectedVar(b(s), v).String())
	}
	got, err := in.snmpd.Get(inside...)
	if err != nil {
		t.Fatal(err)
	}
	checkVars(t, "snmpget inside the ranges", got, want)

	var outside []string
	for _, s := range []string{"1.0", "5.0", "20.1.2.4", "20.1.2.6", "20.1.4.5"} {
		outside = append(outside, b(s).String())
	}
	got, err = in.snmpd.Get(outside...)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if v.Type != "noSuchObject" {
			t.Errorf("snmpget %s outside the ranges: %v, want noSuchObject", outside[i], v)
		}
	}
	if len(got) != len(outside) {
		t.Errorf("snmpget of %d OIDs returned %d", len(outside), len(got))
	}
	// Below an instance inside a range: the object is ours, that instance
	// is not (net-snmp's scalar and table handlers answer the same).
	got, err = in.snmpd.Get(b("20.1.3.5.1").String())
	if err != nil || len(got) != 1 || got[0].Type != "noSuchInstance" {
		t.Errorf("snmpget below the served 20.1.3.5: %v %v, want noSuchInstance", got, err)
	}

	walk, err := in.snmpd.Walk(testBase)
	if err != nil {
		t.Fatal(err)
	}
	checkVars(t, "snmpwalk", walk, want)
	bulk, err := in.snmpd.BulkWalk(testBase, 10)
	if err != nil {
		t.Fatal(err)
	}
	checkVars(t, "snmpbulkwalk", bulk, want)

	in.stop(t)
	if n := in.logs.count("refused a shutdown step"); n != 0 {
		t.Errorf("the master refused %d shutdown steps:\n%s", n, in.logs)
	}
	got, err = in.snmpd.Get(inside[0])
	if err != nil || len(got) != 1 || got[0].Type != "noSuchObject" {
		t.Errorf("after the subagent stopped: %v %v", got, err)
	}
}

func checkVars(t *testing.T, what string, got []snmpdtest.Var, want []string) {
	t.Helper()
	ok := len(got) == len(want)
	for i := 0; ok && i < len(got); i++ {
		ok = got[i].String() == want[i]
	}
	if !ok {
		t.Errorf("%s returned\n %v\nwant\n %v", what, got, want)
	}
}
