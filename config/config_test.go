package config

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/usm"
)

func load(t *testing.T, yaml string, args ...string) (*Config, error) {
	t.Helper()
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	AddFlags(fs)
	if yaml != "" {
		f := filepath.Join(t.TempDir(), "c.yaml")
		if err := os.WriteFile(f, []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--config", f)
	}
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return Load(fs)
}

func TestEmbeddedDefaults(t *testing.T) {
	c, err := load(t, "")
	if err != nil {
		t.Fatal(err)
	}
	if c.Base.String() != "1.3.6.1.4.1.32473.1" || c.Listen != "127.0.0.1:1161" || c.AgentX != "none" {
		t.Fatalf("defaults: %+v", c)
	}
	if c.Refresh.MinAge != time.Second || c.SNMP.Community != "public" || c.Host.ProcRoot != "/proc" {
		t.Fatalf("defaults: %+v", c)
	}
	if !filepath.IsAbs(c.RunDir) || !filepath.IsAbs(c.StateDir) {
		t.Fatalf("computed dirs: %q %q", c.RunDir, c.StateDir)
	}
}

func TestPrecedenceFileEnvFlag(t *testing.T) {
	yaml := "listen: 127.0.0.1:2000\nsnmp:\n  community: fromfile\nrefresh:\n  min_age: 5s\n"
	c, err := load(t, yaml)
	if err != nil {
		t.Fatal(err)
	}
	if c.Listen != "127.0.0.1:2000" || c.SNMP.Community != "fromfile" || c.Refresh.MinAge != 5*time.Second {
		t.Fatalf("file: %+v", c)
	}
	t.Setenv("SUBAGENT_SNMP_COMMUNITY", "fromenv")
	t.Setenv("SUBAGENT_RUN_DIR", "/tmp/x-run")
	c, err = load(t, yaml)
	if err != nil {
		t.Fatal(err)
	}
	if c.SNMP.Community != "fromenv" || c.RunDir != "/tmp/x-run" {
		t.Fatalf("env: %+v", c)
	}
	c, err = load(t, yaml, "--community", "fromflag", "--base-oid", ".1.3.6.1.4.1.99999")
	if err != nil {
		t.Fatal(err)
	}
	if c.SNMP.Community != "fromflag" || c.Base.String() != "1.3.6.1.4.1.99999" {
		t.Fatalf("flag: %+v", c)
	}
}

func TestBadValuesNameTheKey(t *testing.T) {
	cases := map[string]string{
		"base_oid: 1.3.x\n":                                "base_oid",
		"nosuchkey: 1\n":                                   "unknown key nosuchkey",
		"snmp:\n  bogus: 1\n":                              "unknown key snmp.bogus",
		"agentx_session:\n  priority: 0\n":                 "agentx_session.priority",
		"refresh:\n  min_age: soon\n":                      "min_age",
		"log:\n  level: loud\n":                            "log.level",
		"run_dir: relative/dir\n":                          "run_dir",
		"snmp:\n  max_msg_size: 100\n":                     "snmp.max_msg_size",
		"snmp:\n  throttle:\n    failures_per_minute: 0\n": "snmp.throttle.failures_per_minute: 0 is not from 1 to 60000",
		"snmp:\n  throttle:\n    discovery_burst: 20000\n": "snmp.throttle.discovery_burst: 20000 is not from 1 to 10000",
		"snmp:\n  throttle:\n    sources: 2\n":             "snmp.throttle.sources: 2 is not from 16 to 1048576",
		"refresh:\n  walk_memory_mb: 0\n":                  "refresh.walk_memory_mb: 0 is not from 1 to 65536",
		"refresh:\n  snmp_wait: 2s\n":                      "refresh.snmp_wait",
		"agentx_session:\n  timeout: 0s\n":                 "agentx_session.timeout",
		"host:\n  statfs_timeout: -1s\n":                   "host.statfs_timeout",
		"listen: nowhere\n":                                "listen",
		"expressions:\n  max_snmp_derived: -1\n":           "expressions.max_snmp_derived: -1 is not from 0 to 10000",
		"expressions:\n  max_snmp_alarms: 10001\n":         "expressions.max_snmp_alarms: 10001 is not from 0 to 10000",
	}
	for yaml, want := range cases {
		_, err := load(t, yaml)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one naming %q", yaml, err, want)
		}
	}
}

func TestMissingFileIsAnError(t *testing.T) {
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	AddFlags(fs)
	fs.Parse([]string{"--config", "/nonexistent/subagent.yaml"})
	if _, err := Load(fs); err == nil || !strings.Contains(err.Error(), "/nonexistent/subagent.yaml") {
		t.Fatalf("missing file: %v", err)
	}
}

// Every error names the key and says what the key allows, in our words
// rather than the decoder's.
func TestErrorsSayWhatIsAllowed(t *testing.T) {
	cases := map[string][]string{
		"refresh:\n  min_age: fast\n":        {`refresh.min_age: "fast" is not a duration`, "300ms, 1s"},
		"refresh:\n  min_age: 5\n":           {"refresh.min_age: 5 is not a duration", "needs a unit"},
		"snmp:\n  max_repetitions: x\n":      {`snmp.max_repetitions: "x" is not a whole number`},
		"snmp:\n  max_repetitions: 1.5\n":    {"snmp.max_repetitions: 1.5 is not a whole number"},
		"snmp:\n  community: [a, b]\n":       {"snmp.community: a list is not a single value"},
		"snmp:\n  comunity: x\n":             {"unknown key snmp.comunity: did you mean snmp.community?", "snmp has community, max_repetitions, max_msg_size"},
		"refreh:\n  min_age: 1s\n":           {"unknown key refreh: did you mean refresh?"},
		"nosuchkey: 1\n":                     {"unknown key nosuchkey (the top level has base_oid, run_dir,"},
		"refresh: 5\n":                       {"refresh: 5 is not a section; refresh has min_age, interval, snmp_wait"},
		"host:\n  disk_ignore: \"(\"\n":      {`host.disk_ignore: "(" is not a regular expression`, "missing closing )"},
		"host:\n  fs_type_ignore: \"[a-\"\n": {`host.fs_type_ignore: "[a-" is not a regular expression`},
	}
	for yaml, want := range cases {
		_, err := load(t, yaml)
		if err == nil {
			t.Errorf("%q: no error", yaml)
			continue
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q: error %q lacks %q", yaml, err, w)
			}
		}
		for _, raw := range []string{"decoding failed", "DiskIgnore", "FSTypeIgnore", "strconv", "time: invalid"} {
			if strings.Contains(err.Error(), raw) {
				t.Errorf("%q: error %q shows %q", yaml, err, raw)
			}
		}
	}
	t.Setenv("SUBAGENT_REFRESH_INTERVAL", "often")
	if _, err := load(t, ""); err == nil || !strings.Contains(err.Error(), `refresh.interval: "often" is not a duration`) {
		t.Errorf("bad duration from the environment: %v", err)
	}
}

// Contexts read apart: Proc by default; a file's list replaces it, and
// each item is checked.
func TestRefreshApart(t *testing.T) {
	c, err := load(t, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Refresh.Apart) != 1 || c.Refresh.Apart[0] != (RefreshApart{Context: "Proc", MaxAge: 30 * time.Second}) ||
		c.Refresh.WarmFor != 10*time.Minute || c.Refresh.SNMPWait != 500*time.Millisecond {
		t.Fatalf("defaults: %+v", c.Refresh)
	}
	c, err = load(t, "refresh:\n  apart:\n    - {context: FS, max_age: 10s}\n")
	if err != nil || len(c.Refresh.Apart) != 1 || c.Refresh.Apart[0].Context != "FS" {
		t.Fatalf("a file's list: %+v %v", c.Refresh.Apart, err)
	}
	if c, err = load(t, "refresh:\n  apart: []\n"); err != nil || len(c.Refresh.Apart) != 0 {
		t.Fatalf("an empty list: %+v %v", c.Refresh.Apart, err)
	}
	for yaml, want := range map[string]string{
		"refresh:\n  apart:\n    - {context: Proc, max_age: 100ms}\n":                                  "refresh.apart[0].max_age: 100ms is not from 1s to 1h",
		"refresh:\n  apart:\n    - {context: Proc/pid, max_age: 5s}\n":                                 `refresh.apart[0].context: "Proc/pid" is not the name of a top-level context`,
		"refresh:\n  apart:\n    - {context: Proc, max_age: 5s}\n    - {context: Proc, max_age: 9s}\n": `refresh.apart[1].context: "Proc" is listed twice`,
		"refresh:\n  apart:\n    - {context: Proc, maxage: 5s}\n":                                      "maxage",
		"refresh:\n  min_age: 11s\n":                                                                   "refresh.min_age: 11s is above 10s",
		"refresh:\n  warm_for: 0s\n":                                                                   "refresh.warm_for: 0s is not from 1s to 24h",
	} {
		if _, err := load(t, yaml); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", yaml, err, want)
		}
	}
}

// The shares of one user (issue of fair shares): defaults, and bad values
// named by their keys.
func TestPerUserShares(t *testing.T) {
	c, err := load(t, "")
	if err != nil {
		t.Fatal(err)
	}
	if c.Control.MaxHotsetsPerUID != 64 || c.Control.MaxHotsetPeerSetsPerUID != 1024 || c.Control.MaxHotsetBytesPerUID != 32<<20 || c.Control.MaxStatsetsPerUID != 64 ||
		c.ARM.HelloBurstPerUID != 64 || c.ARM.HelloRatePerUID != 10 ||
		c.DDS.MaxStatsPerUID != 0 || c.DDS.MaxSuppliersPerUID != 0 || len(c.DDS.Reserve) != 0 {
		t.Fatalf("defaults: control %+v, arm hello %d/%d, dds %d/%d %v", c.Control, c.ARM.HelloBurstPerUID, c.ARM.HelloRatePerUID,
			c.DDS.MaxStatsPerUID, c.DDS.MaxSuppliersPerUID, c.DDS.Reserve)
	}
	for yaml, want := range map[string]string{
		"control:\n  max_hotsets_per_uid: 0\n":                      "control.max_hotsets_per_uid: 0 is not from 1 to 65536",
		"control:\n  max_statsets_per_uid: 65537\n":                 "control.max_statsets_per_uid: 65537 is not from 1 to 65536",
		"control:\n  max_hotset_peer_sets_per_uid: -1\n":            "control.max_hotset_peer_sets_per_uid: -1 is not from 1",
		"control:\n  max_hotset_bytes_per_uid: 2199023255553\n":     "control.max_hotset_bytes_per_uid: 2199023255553 is not from 1 to 1099511627776",
		"arm:\n  hello_rate_per_uid: 0\n":                           "arm.hello_rate_per_uid: 0 is not from 1 to 10000",
		"arm:\n  hello_burst_per_uid: 100001\n":                     "arm.hello_burst_per_uid: 100001 is not from 1 to 100000",
		"dds:\n  max_stats_per_uid: -1\n":                           "dds.max_stats_per_uid: -1 is not from 0 (a quarter of dds.max_stats_all)",
		"dds:\n  max_suppliers_per_uid: 100000\n":                   "dds.max_suppliers_per_uid: 100000 is not from 0",
		"dds:\n  reserve:\n    - {context: DDS/Acme, asn: -2}\n":    "dds.reserve[0].asn: -2 is not an enterprise number",
		"dds:\n  reserve:\n    - {context: DDS/Acme, uids: [-1]}\n": "dds.reserve[0].uids: -1 is not a user or group id",
	} {
		if _, err := load(t, yaml); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", yaml, err, want)
		}
	}
}

// A misspelled flag is told like a misspelled key: with the nearest one.
func TestUnknownFlagSaysTheNearest(t *testing.T) {
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	AddFlags(fs)
	for args, want := range map[string]string{
		"--comunity":  "unknown flag: --comunity: did you mean --community?",
		"--log-levle": "unknown flag: --log-levle: did you mean --log-level?",
		"--zzzzzzzzz": "unknown flag: --zzzzzzzzz",
	} {
		err := FlagError(fs, fs.Parse([]string{args, "x"}))
		if err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", args, err, want)
		}
	}
	if err := FlagError(fs, fs.Parse([]string{"--community", "x"})); err != nil {
		t.Errorf("a known flag: %v", err)
	}
}

// The built-in throttle settings and walk budget are usm's and asn1tree's
// defaults, which the docs state.
func TestThrottleAndWalkDefaults(t *testing.T) {
	c, err := load(t, "")
	if err != nil {
		t.Fatal(err)
	}
	f, d := c.SNMP.Throttle.Limits()
	if f != usm.DefaultFailureLimits || d != usm.DefaultDiscoveryLimits {
		t.Errorf("snmp.throttle: %+v %+v, usm's defaults %+v %+v", f, d, usm.DefaultFailureLimits, usm.DefaultDiscoveryLimits)
	}
	if got := int64(c.Refresh.WalkMemoryMB) << 20; got != asn1tree.DefaultWalkBudget {
		t.Errorf("refresh.walk_memory_mb: %d bytes, asn1tree's default %d", got, asn1tree.DefaultWalkBudget)
	}
}
