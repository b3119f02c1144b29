package daemon

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfagent/subagent/agentx"
	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/config"
	"github.com/perfagent/subagent/derive"
	"github.com/perfagent/subagent/settable"
)

// limitedDaemon is a daemon of the fixture's configuration as limit
// changes it.
func limitedDaemon(t *testing.T, limit func(*config.Config)) *Daemon {
	t.Helper()
	c := fixtureConfig(t)
	limit(c)
	d, err := New(c, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// concurrentCreates runs create(i) for i in 0..n-1 at once and returns
// the errors, nil where it succeeded.
func concurrentCreates(n int, create func(i int) error) []error {
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = create(i)
		}()
	}
	close(start)
	wg.Wait()
	return errs
}

// snmpCreate creates r in tab through the daemon's Writer as the master
// would: TestSet, then CommitSet (undone if it fails).
func snmpCreate(d *Daemon, tab *settable.Table, r settable.Row) error {
	var vbs []agentx.VarBind
	for i, v := range r.Vals {
		arc := uint32(i) + 2
		if i >= len(tab.Cols) {
			arc += 2 // after StorageType and RowStatus
		}
		if v.Kind != asn1tree.NoValue {
			vbs = append(vbs, agentx.VarBind{OID: tab.IndexOID(arc, r.Name), Value: v})
		}
	}
	n := uint32(len(tab.Cols))
	vbs = append(vbs, agentx.VarBind{OID: tab.IndexOID(n+2, r.Name), Value: asn1tree.Int(int32(r.Storage))},
		agentx.VarBind{OID: tab.IndexOID(n+3, r.Name), Value: asn1tree.Int(settable.CreateAndGo)})
	ch, serr := d.writer.TestSet(vbs)
	if serr != nil {
		return serr
	}
	defer ch.Cleanup()
	if err := ch.Commit(); err != nil {
		if uerr := ch.Undo(); uerr != nil {
			return fmt.Errorf("%w (undo: %v)", err, uerr)
		}
		return err
	}
	return nil
}

// checkAdmitted wants exactly limit of errs nil and the others refusals
// as full that name key (settable.ErrFull, or a TestSet's
// resourceUnavailable),
// and held (what the store holds after) limit.
func checkAdmitted(t *testing.T, errs []error, limit, held int, key string) {
	t.Helper()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case !isFull(err) || !strings.Contains(err.Error(), key):
			t.Errorf("a refusal that is not the limit's: %v", err)
		}
	}
	if ok != limit || held != limit {
		t.Errorf("%d of %d concurrent creates succeeded and %d are held, want %d (%s)", ok, len(errs), held, limit, key)
	}
}

func isFull(err error) bool {
	var serr *agentx.SetError
	return errors.Is(err, settable.ErrFull) || errors.As(err, &serr) && serr.Code == agentx.ResourceUnavailable
}

// Derived statistics and alarms created at once over the control socket
// and SETs of derivedDefTable/alarmDefTable against expressions.max_snmp_derived/max_snmp_alarms: exactly the
// limit are created, each other one is refused naming the setting.
func TestConcurrentExprCreatesStayWithinTheLimit(t *testing.T) {
	const limit, tries = 4, 24
	d := limitedDaemon(t, func(c *config.Config) { c.Expressions.MaxSNMPDerived, c.Expressions.MaxSNMPAlarms = limit, limit })
	st := exprStore{d}
	for _, alarm := range []bool{false, true} {
		kind, key := "derived", "expressions.max_snmp_derived"
		if alarm {
			kind, key = "alarm", "expressions.max_snmp_alarms"
		}
		errs := concurrentCreates(tries, func(i int) error {
			name := fmt.Sprintf("%s%d", kind, i)
			if i%2 == 0 {
				return st.Create(spmiwire.ExprDef{Kind: kind, Name: name, Expr: "Mem/Real/free"})
			}
			r := derivedRow(config.DerivedConf{Name: name, Expr: "Mem/Real/free"}, settable.Volatile)
			if alarm {
				r = alarmRow(config.AlarmConf{Name: name, Expr: "Mem/Real/free > 0", For: 1, Keep: 1}, settable.Volatile)
			}
			return snmpCreate(d, d.expr.defs.tables[b2i(alarm)], r)
		})
		held := 0
		for _, e := range st.List() {
			held += b2i(e.Kind == kind)
		}
		checkAdmitted(t, errs, limit, held, key)
	}
}

// Objectives created at once over the control socket and SETs of
// sloDefTable against slo.max_snmp_objectives: exactly the limit are created.
func TestConcurrentObjectiveCreatesStayWithinTheLimit(t *testing.T) {
	const limit, tries = 4, 24
	d := limitedDaemon(t, func(c *config.Config) { c.SLO.MaxSNMPObjectives = limit })
	st := sloStore{d}
	errs := concurrentCreates(tries, func(i int) error {
		name := fmt.Sprint("obj", i)
		if i%2 == 0 {
			return st.Create(spmiwire.ObjectiveDef{Name: name, Application: "a", Transaction: "t", Threshold: 1000, Target: 0.99, Window: 3600})
		}
		r := sloRow(config.ObjectiveConf{Name: name, Application: "a", Transaction: "t", Threshold: time.Millisecond, Target: 0.99, Window: time.Hour}, settable.Volatile)
		return snmpCreate(d, d.slod.table, r)
	})
	held := 0
	for _, o := range st.List() {
		held += b2i(o.Storage != "readOnly")
	}
	checkAdmitted(t, errs, limit, held, "slo.max_snmp_objectives")
}

// Derived statistics created at once with room for fewer names under
// Derived than expressions.max_snmp_derived allows: each one created has
// its number (none is left out of the tree), and each other one is
// refused naming state.max_names_per_context.
func TestConcurrentDerivedCreatesStayWithinTheNumbering(t *testing.T) {
	const names, tries = 3, 24
	d := limitedDaemon(t, func(c *config.Config) { c.Expressions.MaxSNMPDerived, c.State.MaxNamesPerContext = 100, names })
	st := exprStore{d}
	errs := concurrentCreates(tries, func(i int) error {
		name := fmt.Sprint("derived", i)
		if i%2 == 0 {
			return st.Create(spmiwire.ExprDef{Kind: "derived", Name: name, Expr: "Mem/Real/free"})
		}
		return snmpCreate(d, d.expr.defs.tables[0], derivedRow(config.DerivedConf{Name: name, Expr: "Mem/Real/free"}, settable.Volatile))
	})
	held, numbered := 0, 0
	for _, e := range st.List() {
		held++
		if _, ok := d.num.Lookup(derive.DerivedCx.Name, e.Name); ok {
			numbered++
		}
	}
	checkAdmitted(t, errs, names, held, "state.max_names_per_context")
	if numbered != held {
		t.Errorf("%d of the %d created have a number under Derived", numbered, held)
	}
}
