package config

import (
	"strings"
	"testing"
	"time"
)

func TestARMLimitsPerUserDefaultsAndBounds(t *testing.T) {
	c, err := load(t, "")
	if err != nil {
		t.Fatal(err)
	}
	a := c.ARM
	// One user gets at most a quarter of each total by default.
	for _, f := range []struct {
		key        string
		per, total int
	}{
		{"applications", a.MaxApplicationsPerUID, a.MaxApplications},
		{"transactions", a.MaxTransactionsPerUID, a.MaxTransactions},
		{"processes", a.MaxProcessesPerUID, a.MaxProcesses},
	} {
		if f.per < 1 || 4*f.per > f.total {
			t.Errorf("default %s per uid %d of %d, want at most a quarter", f.key, f.per, f.total)
		}
	}
	if 4*a.MaxApplicationNamesPerUID != c.State.MaxNamesPerContext || c.State.NameGrace != time.Hour {
		t.Errorf("application names per uid %d of %d, name_grace %v: want a quarter, 1h", a.MaxApplicationNamesPerUID, c.State.MaxNamesPerContext, c.State.NameGrace)
	}
	if a.AppIdle != time.Hour {
		t.Errorf("app_idle %v, want 1h", a.AppIdle)
	}
	for _, tc := range []struct{ yaml, want string }{
		{"arm:\n  max_processes_per_uid: 2000\n", "arm.max_processes_per_uid: 2000 is not from 1 to arm.max_processes (1024)"},
		{"arm:\n  max_applications_per_uid: 0\n", "arm.max_applications_per_uid: 0 is not from 1 to arm.max_applications"},
		{"arm:\n  max_transactions: 100\n", "arm.max_transactions_per_uid: 2500 is not from 1 to arm.max_transactions (100)"},
		{"arm:\n  app_idle: 10s\n", "arm.app_idle: 10s is not from 1m to 720h"},
		{"arm:\n  app_idle: 1000h\n", "arm.app_idle: 1000h0m0s is not from 1m to 720h"},
		{"state:\n  max_names_per_context: 50\n", "arm.max_application_names_per_uid: 25000 is not from 1 to state.max_names_per_context (50)"},
		{"arm:\n  max_application_names_per_uid: 0\n", "arm.max_application_names_per_uid: 0 is not from 1"},
		{"state:\n  name_grace: 30s\n", "state.name_grace: 30s is not from 1m to 720h"},
	} {
		_, err := load(t, tc.yaml)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want an error containing %q", tc.yaml, err, tc.want)
		}
	}
	if c, err := load(t, "arm:\n  max_processes: 8\n  max_processes_per_uid: 8\n  app_idle: 5m\n"); err != nil || c.ARM.MaxProcessesPerUID != 8 || c.ARM.AppIdle != 5*time.Minute {
		t.Errorf("valid limits refused: %v", err)
	}
}
