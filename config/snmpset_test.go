package config

import (
	"strings"
	"testing"
	"time"
)

func TestSNMPSetWaitingRows(t *testing.T) {
	c, err := load(t, "")
	if err != nil {
		t.Fatal(err)
	}
	if c.SNMPSet.MaxWaitingRows != 10 || c.SNMPSet.WaitingLifetime != time.Minute {
		t.Errorf("defaults %+v, want 10 rows waiting for at most 1m", c.SNMPSet)
	}
	for _, tc := range []struct{ yaml, want string }{
		{"snmp_set:\n  max_waiting_rows: 0\n", "snmp_set.max_waiting_rows: 0 is not from 1 to 1000"},
		{"snmp_set:\n  waiting_lifetime: 1s\n", "snmp_set.waiting_lifetime: 1s is not from 5s to 5m"},
		{"snmp_set:\n  waiting_lifetime: 10m\n", "snmp_set.waiting_lifetime: 10m0s is not from 5s to 5m"},
	} {
		if _, err := load(t, tc.yaml); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want an error containing %q", tc.yaml, err, tc.want)
		}
	}
}
