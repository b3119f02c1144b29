package config

import (
	"strings"
	"testing"
	"time"
)

func TestRTimeLANDefaults(t *testing.T) {
	c, err := load(t, "")
	if err != nil {
		t.Fatal(err)
	}
	r := c.RTimeLAN
	if !r.Enabled || r.Interval != 10*time.Second || r.MaxRate != 10 || r.Weight != 75 || len(r.Hosts) != 0 || !r.ByReference {
		t.Fatalf("defaults: %+v, want the guide's (10s, 10/s, 75%%)", r)
	}
	t.Setenv("SUBAGENT_RTIME_LAN_HOSTS", "a,b")
	if c, err = load(t, ""); err != nil || strings.Join(c.RTimeLAN.Hosts, " ") != "a b" {
		t.Fatalf("hosts from the environment: %v %+v", err, c.RTimeLAN)
	}
}

func TestRTimeLANRefused(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"rtime_lan:\n  interval: 0s\n", "rtime_lan.interval: 0s is not from 1s to 1h"},
		{"rtime_lan:\n  maxrate: 0\n", "rtime_lan.maxrate: 0 is not from 1 to 1000"},
		{"rtime_lan:\n  weight: 100\n", "rtime_lan.weight: 100 is not from 0 to 99"},
		{"rtime_lan:\n  timeout: 2m\n", "rtime_lan.timeout: 2m0s is not from 10ms to 1m"},
		{"rtime_lan:\n  max_hosts: 0\n", "rtime_lan.max_hosts: 0"},
		{"rtime_lan:\n  intervall: 1s\n", "unknown key rtime_lan.intervall: did you mean rtime_lan.interval?"},
		{"rtime_lan:\n  hosts: a\n  weight: x\n", "rtime_lan.weight: \"x\" is not a whole number"},
	} {
		_, err := load(t, tc.yaml)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want an error containing %q", tc.yaml, err, tc.want)
		}
	}
}
