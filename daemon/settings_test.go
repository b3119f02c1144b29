package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/config"
)

// load loads yaml as the daemon does (config.Load, then Check), with the
// command line args.
func load(t *testing.T, yaml string, args ...string) (*config.Config, error) {
	t.Helper()
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	config.AddFlags(fs)
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
	c, err := config.Load(fs)
	if err != nil {
		return nil, err
	}
	if err := Check(c); err != nil {
		return nil, err
	}
	return c, nil
}

// A setting only its domain package can judge loads as plain data, and
// Check and New refuse it naming the key and the file.
func TestCheckRefusesWhatConfigCannotJudge(t *testing.T) {
	f := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(f, []byte("agentx: udp:1.2.3.4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SUBAGENT_CONFIG", f)
	c, err := config.Load(nil)
	if err != nil {
		t.Fatalf("config.Load judged the AgentX address: %v", err)
	}
	want := "configuration " + f + ": agentx: "
	if err := Check(c); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Check: %v, want an error starting %q", err, want)
	}
	c.RunDir, c.StateDir = t.TempDir(), t.TempDir()
	if _, err := New(c, nil); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("New: %v, want an error starting %q", err, want)
	}
	if _, err := load(t, "agentx: udp:1.2.3.4\n"); err == nil || !strings.Contains(err.Error(), "agentx") {
		t.Errorf("agentx: udp:1.2.3.4: error %v, want one naming agentx", err)
	}
}

func TestDDSLimits(t *testing.T) {
	c, err := load(t, "")
	if err != nil {
		t.Fatal(err)
	}
	// The shipped defaults are the server's own defaults.
	if got, want := ddsLimits(c.DDS.DDSLimits), ddswire.DefaultLimits; got.MaxContexts != want.MaxContexts ||
		got.MaxTemplates != want.MaxTemplates || got.MaxStats != want.MaxStats ||
		got.MaxStatsTotal != want.MaxStatsTotal || got.MaxArea != want.MaxArea {
		t.Fatalf("default limits %+v, want dds.DefaultLimits %+v", got, want)
	}
	c, err = load(t, "dds:\n  max_contexts: 5\n  max_area: 4096\n")
	if err != nil {
		t.Fatal(err)
	}
	if l := ddsLimits(c.DDS.DDSLimits); l.MaxContexts != 5 || l.MaxArea != 4096 {
		t.Fatalf("limits from the file: %+v", l)
	}
	t.Setenv("SUBAGENT_DDS_MAX_STATS", "7")
	if c, err = load(t, ""); err != nil || c.DDS.MaxStats != 7 {
		t.Fatalf("limit from the environment: %v %+v", err, c)
	}
}

func TestDDSLimitsRefused(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"dds:\n  max_contexts: 0\n", "dds.max_contexts: 0 is not from 1 to"},
		{"dds:\n  max_templates: 70000\n", "dds.max_templates: 70000 is not from 1 to 65536"},
		{"dds:\n  max_stats_total: -1\n", "dds.max_stats_total: -1"},
		{"dds:\n  max_area: 12\n", "dds.max_area: 12 is not a multiple of 8"},
		{"dds:\n  max_area: 2147483648\n", "dds.max_area: 2147483648"},
		{"dds:\n  max_aera: 8\n", "unknown key dds.max_aera"},
	} {
		_, err := load(t, tc.yaml)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want an error containing %q", tc.yaml, err, tc.want)
		}
	}
}

func TestRTimeLANSettingsFromFile(t *testing.T) {
	c, err := load(t, "rtime_lan:\n  interval: 30s\n  maxrate: 2\n  weight: 50\n  hosts: [gw, 10.0.0.1, \"::1\", \"[2001:db8::1]\"]\n")
	if err != nil {
		t.Fatal(err)
	}
	s := RTimeLANSettings(c.RTimeLAN)
	if s.Interval != 30*time.Second || s.MaxRate != 2 || s.Weight != 50 || strings.Join(s.Hosts, " ") != "gw 10.0.0.1 ::1 [2001:db8::1]" {
		t.Fatalf("from the file: %+v", s)
	}
}

func TestRTimeLANHostsRefused(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"rtime_lan:\n  hosts: [\"a b\"]\n", `rtime_lan.hosts: host name "a b" contains ' '`},
		{"rtime_lan:\n  hosts: [a, a]\n", `rtime_lan.hosts: hosts "a" and "a" both become RTime/LAN/a`},
		{"rtime_lan:\n  hosts: [\"::1\", \"[::1]\"]\n", `rtime_lan.hosts: hosts "::1" and "[::1]" both become RTime/LAN/::1`},
		{"rtime_lan:\n  max_hosts: 1\n  hosts: [a, b]\n", "rtime_lan.hosts: 2 hosts configured, more than max_hosts 1"},
	} {
		_, err := load(t, tc.yaml)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want an error containing %q", tc.yaml, err, tc.want)
		}
	}
}

// A system group value that is no DisplayString stops the load naming its
// key.
func TestSNMPSystemDisplayStrings(t *testing.T) {
	for key, yaml := range map[string]string{
		"snmp.sys_contact":  "snmp:\n  sys_contact: " + strings.Repeat("x", 256) + "\n",
		"snmp.sys_location": "snmp:\n  sys_location: \"a\\x1bb\"\n",
		"snmp.sys_name":     "snmp:\n  sys_name: \"\\x01\"\n",
	} {
		if _, err := load(t, yaml); err == nil || !strings.Contains(err.Error(), key+":") {
			t.Errorf("%s: %v, want an error naming it", key, err)
		}
	}
	if _, err := load(t, "snmp:\n  sys_descr: \"Payroll database\\r\\nLinux\"\n"); err != nil {
		t.Errorf("a DisplayString with CR LF: %v", err)
	}
}

// snmp.users that usm or the daemon refuses stop the load naming the key.
func TestSNMPUsersUSMRules(t *testing.T) {
	user := "snmp:\n  users:\n    - user: ops\n"
	for key, yaml := range map[string]string{
		"snmp.users[0].auth_password":         user + "      auth_password: short\n",
		"snmp.users[0].auth_protocol":         user + "      auth_password: abcdefgh\n      auth_protocol: SHA3\n",
		"snmp.users[0].priv_password":         user + "      priv_password: abcdefgh\n",
		"snmp.users[0].priv_protocol":         user + "      auth_password: abcdefgh\n      priv_password: abcdefgh\n      priv_protocol: DES\n",
		"snmp.users[1].user":                  user + "    - user: ops\n",
		"snmp.users[0].user":                  "snmp:\n  users:\n    - auth_password: abcdefgh\n",
		"snmp.users[0].auth_protocol: MD5 is": user + "      auth_password: abcdefgh\n      auth_protocol: MD5\n",
	} {
		if _, err := load(t, yaml); err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%s: %v, want an error naming it", key, err)
		}
	}
	if _, err := load(t, user+"      auth_password: abcdefgh\n      auth_protocol: MD5\n      allow_md5: true\n"); err != nil {
		t.Errorf("MD5 with allow_md5: %v", err)
	}
	if _, err := load(t, user+"      auth_password_file: /etc/subagent/ops.auth\n      priv_password_file: /etc/subagent/ops.priv\n"); err != nil {
		t.Errorf("passwords in files: %v", err)
	}
}

// The DDS reservations (dds.CheckReservations) and the notification log's
// limits (notiflog.CheckLimits) are refused naming the key.
func TestReservationsAndLogLimitsNameTheKey(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"dds:\n  reserve:\n    - {context: DDS/Acme}\n    - {context: DDS/Acme}\n", "dds.reserve[1].context: DDS/Acme is reserved already by dds.reserve[0]"},
		{"dds:\n  reserve:\n    - {context: DDS/Acme/db, asn: 9}\n", "dds.reserve[0].asn: DDS/Acme/db is not a vendor context"},
		{"hotset:\n  log_entries: -1\n", "hotset.log_entries: -1 is not from 1 to"},
		{"hotset:\n  log_max_age: 10s\n", "hotset.log_max_age: 10s is not from 1m to 720h"},
	} {
		_, err := load(t, tc.yaml)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want an error containing %q", tc.yaml, err, tc.want)
		}
	}
	if _, err := load(t, "dds:\n  reserve:\n    - {context: DDS/Acme, asn: 9, uids: [1000]}\n"); err != nil {
		t.Errorf("a valid reservation: %v", err)
	}
}
