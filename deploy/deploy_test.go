package deploy

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/perfagent/subagent/internal/promtest"
	"go.yaml.in/yaml/v3"
)

// promtool accepts the scrape configurations and the rules, and the rules'
// unit tests pass; any error promtool reports fails the test.
func TestPromtoolChecks(t *testing.T) {
	promtool := promtest.Tool(t, "promtool")
	for _, args := range [][]string{
		{"check", "config", "prometheus.yml"},
		{"check", "config", "shard.yml"},
		{"check", "config", "central.yml"},
		{"check", "rules", "rules.yml", "alerts.yml"},
		{"test", "rules", "tests/rules_test.yml"},
	} {
		if err := promtoolOK(t, "prometheus", promtool, args...); err != nil {
			t.Error(err)
		}
	}
}

// promtoolOK runs promtool in dir and says what it reported when it
// failed.
func promtoolOK(t *testing.T, dir, promtool string, args ...string) error {
	t.Helper()
	out, err := promtest.Run(t, dir, promtool, args...)
	if err != nil || strings.Contains(out, "FAILED") {
		return fmt.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// The check above fails when promtool does: a unit test expecting the
// wrong value, and a rule that does not parse.
func TestPromtoolFailuresFail(t *testing.T) {
	promtool := promtest.Tool(t, "promtool")
	dir := t.TempDir()
	rules, err := os.ReadFile("prometheus/rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	tests, err := os.ReadFile("prometheus/tests/rules_test.yml")
	if err != nil {
		t.Fatal(err)
	}
	wrong := strings.Replace(string(tests), "value: 6144000000", "value: 6144000001", 1)
	if wrong == string(tests) {
		t.Fatal("rules_test.yml has no memory used of 6144000000 to spoil")
	}
	wrong = strings.ReplaceAll(wrong, "../rules.yml", "rules.yml")
	wrong = strings.ReplaceAll(wrong, "../alerts.yml", "rules.yml")
	for name, body := range map[string]string{"rules.yml": string(rules), "t.yml": wrong,
		"bad.yml": strings.Replace(string(rules), "expr: fsPctUsed", "expr: fsPctUsed +", 1)} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := promtoolOK(t, dir, promtool, "test", "rules", "t.yml"); err == nil || !strings.Contains(err.Error(), "6.144000001E+09") {
		t.Errorf("a wrong expectation passed: %v", err)
	}
	if err := promtoolOK(t, dir, promtool, "check", "rules", "bad.yml"); err == nil {
		t.Error("a rule that does not parse passed")
	}
}

// Every recording rule and every alert has a unit test in
// tests/rules_test.yml, and every alert a runbook paragraph in
// docs/FLEET.md that its runbook_url names.
func TestEveryRuleIsUnitTestedAndEveryAlertHasARunbook(t *testing.T) {
	tests, err := os.ReadFile("prometheus/tests/rules_test.yml")
	if err != nil {
		t.Fatal(err)
	}
	fleet, err := os.ReadFile("../docs/FLEET.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range promtest.Rules(t, "prometheus/rules.yml") {
		if !regexp.MustCompile(`expr: '(round\()?(100 \* )?` + regexp.QuoteMeta(r.Record) + `\b`).Match(tests) {
			t.Errorf("recording rule %s has no promql_expr_test", r.Record)
		}
	}
	alerts := promtest.Rules(t, "prometheus/alerts.yml")
	if len(alerts) == 0 {
		t.Fatal("no alerts")
	}
	for _, r := range alerts {
		if !regexp.MustCompile(`alertname: ` + r.Alert + `\n\s+exp_alerts:\n\s+- exp_labels:`).Match(tests) {
			t.Errorf("alert %s: no unit test where it fires", r.Alert)
		}
		want := "docs/FLEET.md#" + strings.ToLower(r.Alert)
		if r.Annotations["runbook_url"] != want {
			t.Errorf("alert %s: runbook_url %q, want %q", r.Alert, r.Annotations["runbook_url"], want)
		}
		if !strings.Contains(string(fleet), "\n### "+r.Alert+"\n") {
			t.Errorf("alert %s: docs/FLEET.md has no runbook heading \"### %s\"", r.Alert, r.Alert)
		}
	}
}

// The metrics the rules, alerts and dashboard select are objects the
// shipped MIB defines and the shipped snmp_exporter module exports (a
// renamed object fails here), counters where they take a rate, or
// recording rules that exist, or the scrape's own series.
func TestQueriesNameShippedObjects(t *testing.T) {
	objects := promtest.ExportedObjects(t, "../MIBs/SUBAGENT-MIB.txt", "../MIBs/snmp_exporter/generator.yml")
	if len(objects) < 100 {
		t.Fatalf("%d objects exported from the MIB: the parse failed", len(objects))
	}
	// Measurements, scalar and column, are walked; the records tables
	// (the Directory catalogue, the notification log) are not, their
	// scalars are (mib.ExporterRecords).
	for _, n := range []string{"cpuIdle", "cpuTotalIdle", "fsPctUsed", "directoryGeneration", "notifLogLogged"} {
		if _, ok := objects[n]; !ok {
			t.Errorf("the shipped module does not export %s", n)
		}
	}
	for _, n := range []string{"directoryStatDescr", "directoryContextRows", "directoryChangeOp", "notifLogEntryOid", "notifLogEntryVarValue"} {
		if _, ok := objects[n]; ok {
			t.Errorf("the shipped module walks %s, a records table's column", n)
		}
	}
	records := map[string]bool{}
	var exprs []promtest.Panel
	for _, r := range promtest.Rules(t, "prometheus/rules.yml") {
		records[r.Record] = true
		exprs = append(exprs, promtest.Panel{Title: "rule " + r.Record, Expr: r.Expr})
	}
	for _, r := range promtest.Rules(t, "prometheus/alerts.yml") {
		exprs = append(exprs, promtest.Panel{Title: "alert " + r.Alert, Expr: r.Expr})
	}
	panels := promtest.DashboardQueries(t, "grafana/subagent.json")
	if len(panels) < 20 {
		t.Errorf("the dashboard has %d queries", len(panels))
	}
	exprs = append(exprs, panels...)
	// Series every scrape has beside the module's (Prometheus's and
	// snmp_exporter's own).
	scrape := map[string]bool{"up": true, "scrape_duration_seconds": true, "scrape_samples_scraped": true,
		"snmp_scrape_duration_seconds": true, "snmp_scrape_pdus_returned": true, "ALERTS": true}
	for _, e := range exprs {
		names, rated := promtest.MetricNames(e.Expr)
		if len(names) == 0 {
			t.Errorf("%s: no metric in %q", e.Title, e.Expr)
		}
		for _, n := range names {
			o, isObject := objects[n]
			switch {
			case strings.Contains(n, ":"):
				if !records[n] {
					t.Errorf("%s: %s is no recording rule of rules.yml", e.Title, n)
				}
			case scrape[n]:
			case !isObject:
				t.Errorf("%s: %s is no object the shipped module exports (MIBs/SUBAGENT-MIB.txt, MIBs/snmp_exporter/generator.yml)", e.Title, n)
			case rated[n] && !o.Counter:
				t.Errorf("%s: rate of %s, a %s the exporter types gauge", e.Title, n, o.Syntax)
			case !rated[n] && o.Counter:
				t.Errorf("%s: %s is a counter (%s) used without a rate", e.Title, n, o.Syntax)
			}
		}
	}
}

// The metric names test itself: it finds the names and only them.
func TestMetricNames(t *testing.T) {
	names, rated := promtest.MetricNames(`100 * sum without (mode) (a:b:c{mode=~"idle|wait"}) / ignoring (mode) group_left topk by (x) (5, rate(cpuUser{instance=~"$host"}[$__rate_interval])) or memRealAvail offset 1m > bool 1e3`)
	if got := strings.Join(names, " "); got != "a:b:c cpuUser memRealAvail" {
		t.Errorf("names %q", got)
	}
	if !rated["cpuUser"] || rated["memRealAvail"] {
		t.Errorf("rated %v", rated)
	}
}

// The provisioning file points Grafana at the dashboard's directory.
func TestGrafanaProvisioningNamesTheDashboard(t *testing.T) {
	b, err := os.ReadFile("grafana/provisioning/dashboards/subagent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "path: /var/lib/grafana/dashboards/subagent") {
		t.Errorf("provisioning file names no dashboard directory:\n%s", b)
	}
	if _, err := os.Stat(filepath.Join("grafana", "subagent.json")); err != nil {
		t.Error(err)
	}
}

// shard.yml's scrape job is prometheus.yml's with the two hashmod rules in
// front: the layouts never drift apart.
func TestShardJobIsTheSingleJobPlusHashmod(t *testing.T) {
	job := func(file string) map[string]any {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var c struct {
			ScrapeConfigs []map[string]any `yaml:"scrape_configs"`
		}
		if err := yaml.Unmarshal(b, &c); err != nil {
			t.Fatal(err)
		}
		for _, j := range c.ScrapeConfigs {
			if j["job_name"] == "subagent" {
				return j
			}
		}
		t.Fatalf("%s: no job subagent", file)
		return nil
	}
	single, shard := job("prometheus/prometheus.yml"), job("prometheus/shard.yml")
	rules, _ := shard["relabel_configs"].([]any)
	if len(rules) < 2 {
		t.Fatalf("shard relabel_configs %v", rules)
	}
	for i, action := range []string{"hashmod", "keep"} {
		if r, _ := rules[i].(map[string]any); r["action"] != action {
			t.Errorf("shard relabel rule %d: %v, want action %s", i, r, action)
		}
	}
	shard["relabel_configs"] = rules[2:]
	if !reflect.DeepEqual(single, shard) {
		t.Errorf("shard.yml's job subagent differs from prometheus.yml's beyond hashmod:\n%v\n%v", shard, single)
	}
}
