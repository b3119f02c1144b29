package config

import (
	"strings"
	"testing"

	"github.com/perfagent/subagent/client/ddswire"
)

func TestDDSLimits(t *testing.T) {
	c, err := load(t, "")
	if err != nil {
		t.Fatal(err)
	}
	// The shipped defaults are the server's own defaults.
	if got, want := c.DDS.Limits(), ddswire.DefaultLimits; got.MaxContexts != want.MaxContexts ||
		got.MaxTemplates != want.MaxTemplates || got.MaxStats != want.MaxStats ||
		got.MaxStatsTotal != want.MaxStatsTotal || got.MaxArea != want.MaxArea {
		t.Fatalf("default limits %+v, want dds.DefaultLimits %+v", got, want)
	}
	c, err = load(t, "dds:\n  max_contexts: 5\n  max_area: 4096\n")
	if err != nil {
		t.Fatal(err)
	}
	if l := c.DDS.Limits(); l.MaxContexts != 5 || l.MaxArea != 4096 {
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
