// Package derive evaluates the named expressions of the configuration:
// derived statistics, served as Derived/<name> (docs/EXPRESSIONS.md), and
// alarms, whose per-instance states (inactive, pending, firing,
// clearing) are served as the Alarm table and whose transitions to
// firing and back to inactive are handed on as events for the daemon to
// notify, as hotset events are.
//
// The engine evaluates every expression over one published snapshot with
// one memory of counters (expr.Rates), so that all of them read a
// counter's rate over the same interval; its Provider serves the last
// results and never evaluates inside Collect.
package derive

import (
	"fmt"
	"math"
	"regexp"
	"time"

	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/expr"
)

// Derived is one derived statistic.
type Derived struct {
	Name   string
	X      *expr.Expr
	Descr  string
	Units  string
	Scale  uint8 // decimal places served
	Signed bool  // served as Integer32 (32 bits, may be negative) instead of a 64-bit gauge
}

// Alarm is one alarm. Its condition holds, per instance, when the
// expression is not 0; with Rising set, when the value reaches Rising
// while the alarm is inactive or pending, and stays above Falling while
// it is firing or clearing.
type Alarm struct {
	Name     string
	X        *expr.Expr
	Rising   *float64
	Falling  *float64 // with Rising; nil: Rising
	For      int      // evaluations the condition must hold before firing (>= 1)
	Keep     int      // evaluations it must be false before clearing (>= 1)
	Severity int
	Cleared  bool // a cleared notification when it goes back to inactive
	// Frequency is the least time between two raises of one instance: a
	// raise sooner fires without alarmRaised, and its clear without
	// alarmCleared (0: every raise is notified).
	Frequency time.Duration
	// TrapNo, when not 0, is the number of the notification a raise sends
	// (alarmTrapN, base.0.TrapNo) instead of alarmRaised; its rules are
	// schema.CheckTrapNumbers', which the daemon applies.
	TrapNo int
}

// MaxFor bounds For and Keep; MaxFrequency bounds Frequency.
const (
	MaxFor       = 10000
	MaxFrequency = 7 * 24 * time.Hour
)

var nameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,30}$`)

// CheckName checks the name of a derived statistic or an alarm.
func CheckName(kind, name string) error {
	if !nameRE.MatchString(name) {
		return spmierr.Errorf(spmierr.SiBadArgument, "%s %q: name: want a letter then up to 30 letters, digits, _ or -", kind, name)
	}
	return nil
}

// Validate checks a derived statistic.
func (d *Derived) Validate() error {
	if err := CheckName("derived", d.Name); err != nil {
		return err
	}
	if d.X == nil {
		return spmierr.Errorf(spmierr.SiBadArgument, "derived %q: expr: missing", d.Name)
	}
	if len(d.Descr) > spmiwire.MaxDescr || len(d.Units) > spmiwire.MaxDescr {
		return spmierr.Errorf(spmierr.SiBadArgument, "derived %q: description and units: at most %d bytes each", d.Name, spmiwire.MaxDescr)
	}
	if d.Scale > 6 {
		return spmierr.Errorf(spmierr.SiBadArgument, "derived %q: scale: %d is not from 0 to 6", d.Name, d.Scale)
	}
	return nil
}

// Validate checks an alarm.
func (a *Alarm) Validate() error {
	bad := func(field, format string, args ...any) error {
		return spmierr.Errorf(spmierr.SiBadArgument, "alarm %q: %s: "+format, append([]any{a.Name, field}, args...)...)
	}
	if err := CheckName("alarm", a.Name); err != nil {
		return err
	}
	switch {
	case a.X == nil:
		return bad("expr", "missing")
	case a.For < 1 || a.For > MaxFor:
		return bad("for", "%d is not from 1 to %d evaluations", a.For, MaxFor)
	case a.Keep < 1 || a.Keep > MaxFor:
		return bad("keep", "%d is not from 1 to %d evaluations", a.Keep, MaxFor)
	case a.Frequency < 0 || a.Frequency > MaxFrequency || a.Frequency%time.Second != 0:
		return bad("frequency", "%v is not whole seconds from 0 to %v", a.Frequency, MaxFrequency)
	case a.TrapNo < 0:
		return bad("trap_no", "%d is negative", a.TrapNo)
	case a.Severity < 0 || a.Severity > 32767:
		return bad("severity", "%d is not from 0 to 32767", a.Severity)
	case a.Falling != nil && a.Rising == nil:
		return bad("falling", "needs rising")
	case a.Rising != nil && (math.IsNaN(*a.Rising) || math.IsInf(*a.Rising, 0)):
		return bad("rising", "not a number")
	case a.Falling != nil && !(*a.Falling <= *a.Rising):
		return bad("falling", "%v is above rising (%v)", *a.Falling, *a.Rising)
	}
	return nil
}

// falling is the level a firing instance must fall to (or below) to be false.
func (a *Alarm) falling() float64 {
	if a.Falling != nil {
		return *a.Falling
	}
	return *a.Rising
}

// Condition describes the alarm's test for logs and tables.
func (a *Alarm) Condition() string {
	if a.Rising == nil {
		return a.X.String()
	}
	return fmt.Sprintf("%s rising %v falling %v", a.X, *a.Rising, a.falling())
}

func sameAlarm(a, b Alarm) bool {
	eq := func(x, y *float64) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return a.Name == b.Name && a.X.String() == b.X.String() && eq(a.Rising, b.Rising) && eq(a.Falling, b.Falling) &&
		a.For == b.For && a.Keep == b.Keep && a.Severity == b.Severity && a.Cleared == b.Cleared && a.Frequency == b.Frequency &&
		a.TrapNo == b.TrapNo
}
