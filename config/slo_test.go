package config

import (
	"strings"
	"testing"
	"time"
)

// Objectives: each wrong setting is refused naming its key and what is allowed.
func TestObjectiveErrorsNameTheKey(t *testing.T) {
	item := "objectives:\n  - name: checkout\n    application: Shop*\n    transaction: Checkout\n    target: 0.999\n    window: 720h\n"
	c, err := load(t, item+"    threshold: 300ms\n")
	if err != nil {
		t.Fatalf("a valid objective: %v", err)
	}
	if o := c.Objectives[0]; o.Threshold != 300*time.Millisecond || o.Target != 0.999 || o.Window != 720*time.Hour || o.Application != "Shop*" {
		t.Fatalf("read %+v", o)
	}
	for yaml, want := range map[string]string{
		item + "    colour: red\n":                              "unknown key objectives[0].colour",
		item + "    threshold: 0.3\n":                           "objectives[0].threshold: 0.3 is not a duration",
		item + "    threshold: 2h\n":                            "objectives[0].threshold: 2h0m0s is not from 1us to 1h",
		strings.Replace(item, "0.999", "1", 1):                  "objectives[0].target: 1 is not a ratio from 0.5 to 0.99999",
		strings.Replace(item, "720h", "30m", 1):                 "objectives[0].window: 30m0s is not from 1h to 2160h",
		strings.Replace(item, "720h", "2161h", 1):               "objectives[0].window: 2161h0m0s is not from 1h to 2160h",
		strings.Replace(item, "720h", "1h30s", 1):               "objectives[0].window: 1h0m30s is not whole minutes",
		strings.Replace(item, "720h", "100h30m", 1):             "objectives[0].window: 100h30m0s is not whole hours",
		strings.Replace(item, "Shop*", "Shop[", 1):              "objectives[0].application: \"Shop[\" is not a pattern",
		strings.Replace(item, "name: checkout", "name: a/b", 1): "objectives[0].name: \"a/b\" is not a name",
		item + strings.Replace(item, "objectives:\n", "", 1):    "objectives[1].name: \"checkout\" is already objectives[0]'s",
		"slo:\n  interval: 0s\n":                                "slo.interval: 0s is not from 1s to 5m",
		"slo:\n  page:\n    factor: 0.5\n":                      "slo.page.factor: 0.5 is not from 1 to 1000",
		"slo:\n  page:\n    long: 90s\n":                        "slo.page.long: 1m30s is not whole minutes from 1m to 72h",
		"slo:\n  ticket:\n    short: 7h\n":                      "slo.ticket.short: 7h0m0s is not shorter than slo.ticket.long (6h0m0s)",
		"slo:\n  max_snmp_objectives: 1025\n":                   "slo.max_snmp_objectives: 1025 is not from 0 to 1024",
	} {
		_, err := load(t, yaml)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q:\n got %v\nwant %q", yaml, err, want)
		}
	}
}

// CheckObjective, for objectives created over SNMP and the control
// socket, refuses what the file's checks refuse, named by from.
func TestCheckObjective(t *testing.T) {
	ok := ObjectiveConf{Name: "checkout", Application: "Shop*", Transaction: "Checkout", Target: 0.999, Window: 720 * time.Hour}
	if err := CheckObjective("def", ok); err != nil {
		t.Fatalf("a valid objective: %v", err)
	}
	for want, o := range map[string]ObjectiveConf{
		"def.name: \"a b\" is not a name":          {Name: "a b", Application: "x", Transaction: "x", Target: 0.9, Window: time.Hour},
		"def.window: 1h0m30s is not whole minutes": {Name: "w", Application: "x", Transaction: "x", Target: 0.9, Window: time.Hour + 30*time.Second},
		"def.target: 0.4 is not a ratio":           {Name: "t", Application: "x", Transaction: "x", Target: 0.4, Window: time.Hour},
		"def.transaction: \"x[\" is not a pattern": {Name: "p", Application: "x", Transaction: "x[", Target: 0.9, Window: time.Hour},
	} {
		if err := CheckObjective("def", o); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: got %v, want %q", o, err, want)
		}
	}
}
