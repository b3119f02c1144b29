package daemon

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/perfagent/subagent/config"
	"github.com/perfagent/subagent/settable"
	"github.com/perfagent/subagent/slo"
)

// The objectives measured stay within what the state file holds: with
// slo.MaxObjectives configured, a new one is refused as full (SNMP's
// resourceUnavailable) and one created before is left out, while
// replacing it is still checked as the file's are.
func TestObjectivesBoundedByTheStateFile(t *testing.T) {
	obj := func(name string) config.ObjectiveConf {
		return config.ObjectiveConf{Name: name, Application: "a", Transaction: "t", Target: 0.99, Window: time.Hour}
	}
	x := &sloDefs{snmp: map[string]created[config.ObjectiveConf]{"old": {conf: obj("old"), storage: settable.Volatile}}}
	for i := range slo.MaxObjectives - 1 {
		x.conf = append(x.conf, obj(fmt.Sprint("c", i)))
	}
	d := &Daemon{slod: x}
	if n := len(x.allLocked()); n != slo.MaxObjectives {
		t.Fatalf("%d measured, want %d (the created one fits)", n, slo.MaxObjectives)
	}
	if err := d.checkObjective("test", obj("new"), settable.Volatile); !errors.Is(err, settable.ErrFull) {
		t.Errorf("a new objective beyond %d: %v, want ErrFull", slo.MaxObjectives, err)
	}
	if err := d.checkObjective("test", obj("old"), settable.Volatile); err != nil {
		t.Errorf("replacing a created objective: %v", err)
	}
	x.conf = append(x.conf, obj("last"))
	all := x.allLocked()
	if len(all) != slo.MaxObjectives || all[len(all)-1].Name != "last" {
		t.Errorf("a reload to %d configured: %d measured, the last %q; want the configured ones only", slo.MaxObjectives, len(all), all[len(all)-1].Name)
	}
}
