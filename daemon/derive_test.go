package daemon

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/spmiwire"

	"github.com/perfagent/subagent/config"
)

// A reload replaces the derived statistics and alarms: the new ones are
// served from the next evaluation, the removed ones are gone; a
// configuration with a bad expression is refused naming its key, and
// what ran before stays.
func TestReloadReplacesDerivedAndAlarms(t *testing.T) {
	c := fixtureConfig(t)
	c.Derived = []config.DerivedConf{{Name: "used", Expr: "Mem/Real/size - Mem/Real/free", Units: "KiB"}}
	loaded := *c
	d, err := New(c, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	served := func(path string) bool {
		d.expr.evaluate(d.h)
		_, err := d.h.Refresh().Lookup(path)
		return err == nil
	}
	if !served("Derived/used/value") {
		t.Fatal("Derived/used/value is not served")
	}
	n := loaded
	n.Derived = []config.DerivedConf{{Name: "freepct", Expr: "Mem/Real/free / Mem/Real/size * 100", Scale: 2}}
	n.Alarms = []config.AlarmConf{{Name: "memfree", Expr: "Mem/Real/free > 0", For: 1}}
	if err := d.Reload(&n); err != nil {
		t.Fatal(err)
	}
	if !served("Derived/freepct/value") || served("Derived/used/") || !served("Alarm/1/state") {
		t.Errorf("after the reload: Derived/freepct %v, Derived/used %v (want gone), Alarm/1 %v",
			served("Derived/freepct/value"), served("Derived/used/"), served("Alarm/1/state"))
	}
	bad := n
	bad.Derived = []config.DerivedConf{{Name: "broken", Expr: "sum(Mem/Real/free"}}
	if err := d.Reload(&bad); err == nil || !strings.Contains(err.Error(), "derived[0].expr") {
		t.Errorf("a bad expression reloaded: %v", err)
	}
	if !served("Derived/freepct/value") || served("Derived/broken/") {
		t.Errorf("a refused reload changed the derived statistics")
	}
}

// A configured derived statistic hides one created through the control
// socket of the same name while the configuration has it, and the created
// one comes back when the configuration drops it; an alarm's frequency
// is checked with its key.
func TestConfiguredNameHidesCreated(t *testing.T) {
	c := fixtureConfig(t)
	loaded := *c
	d, err := New(c, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	st := exprStore{d}
	if err := st.Create(spmiwire.ExprDef{Kind: "derived", Name: "made", Expr: "Mem/Real/free"}); err != nil {
		t.Fatal(err)
	}
	list := func() string {
		var out []string
		for _, e := range st.List() {
			out = append(out, e.Kind+" "+e.Name+" "+e.Storage+" "+e.Expr)
		}
		return strings.Join(out, "; ")
	}
	if got := list(); got != "derived made nonVolatile Mem/Real/free" {
		t.Errorf("after create: %s", got)
	}
	n := loaded
	n.Derived = []config.DerivedConf{{Name: "made", Expr: "Mem/Real/size"}}
	if err := d.Reload(&n); err != nil {
		t.Fatal(err)
	}
	if got := list(); got != "derived made readOnly Mem/Real/size" {
		t.Errorf("with a configured one of the name: %s", got)
	}
	if err := st.Create(spmiwire.ExprDef{Kind: "alarm", Name: "made", Expr: "1"}); err == nil || !strings.Contains(err.Error(), "configuration file") {
		t.Errorf("an alarm of a configured name: %v", err)
	}
	if err := d.Reload(&loaded); err != nil {
		t.Fatal(err)
	}
	if got := list(); got != "derived made nonVolatile Mem/Real/free" {
		t.Errorf("after the configured one went: %s", got)
	}
	bad := loaded
	bad.Alarms = []config.AlarmConf{{Name: "fast", Expr: "1", Frequency: 1500 * time.Millisecond}}
	if err := checkExpressions(&bad); err == nil || !strings.Contains(err.Error(), "alarms[0]") || !strings.Contains(err.Error(), "frequency") {
		t.Errorf("frequency 1.5s: %v", err)
	}
}
