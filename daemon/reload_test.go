package daemon

import (
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/perfagent/subagent/config"
)

func TestReloadAppliesAllOrNothing(t *testing.T) {
	d := &Daemon{log: slog.New(slog.DiscardHandler)}
	var applied []string
	refuse := false
	d.AddReloader(Reloader{Name: "a", Check: func(*config.Config) error { return nil },
		Apply: func(*config.Config) { applied = append(applied, "a") }})
	d.AddReloader(Reloader{Name: "b", Check: func(*config.Config) error {
		if refuse {
			return errors.New("bad interval")
		}
		return nil
	}, Apply: func(*config.Config) { applied = append(applied, "b") }})

	refuse = true
	err := d.Reload(&config.Config{})
	if err == nil || !strings.Contains(err.Error(), "b: bad interval") {
		t.Fatalf("Reload with a refusing part: %v, want an error naming b", err)
	}
	if len(applied) != 0 {
		t.Fatalf("a refused reload applied %v", applied)
	}
	refuse = false
	if err := d.Reload(&config.Config{}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(applied, ",") != "a,b" {
		t.Fatalf("applied %v, want a,b", applied)
	}
}
