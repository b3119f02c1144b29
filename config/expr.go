package config

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ExprSettings configure the evaluation of derived statistics and alarms
// (docs/EXPRESSIONS.md).
type ExprSettings struct {
	// Interval is the time between two evaluations: counters are read as
	// rates over it, and an alarm's for and keep count evaluations.
	Interval time.Duration `mapstructure:"interval"`
	// MaxSNMPDerived and MaxSNMPAlarms bound the rows managers create in
	// derivedDefTable and alarmDefTable over SNMP (docs/EXPRESSIONS.md).
	MaxSNMPDerived int `mapstructure:"max_snmp_derived"`
	MaxSNMPAlarms  int `mapstructure:"max_snmp_alarms"`
	// CommandUser is the user (name or uid, never uid 0) the alarms'
	// commands run as; CommandTimeout kills a command's process group;
	// CommandMax bounds the commands running at once (docs/EXPRESSIONS.md).
	CommandUser    string        `mapstructure:"command_user"`
	CommandTimeout time.Duration `mapstructure:"command_timeout"`
	CommandMax     int           `mapstructure:"command_max"`
}

// Bounds of an alarm's command.
const (
	MaxCommandArgs   = 64
	MaxCommandArgLen = 4096
)

// CommandIDs resolves expressions.command_user to a uid and gid; uid 0
// is refused: a value's command never runs as root.
func (s ExprSettings) CommandIDs() (uid, gid uint32, err error) {
	if s.CommandUser == "" {
		return 0, 0, fmt.Errorf("expressions.command_user: empty: name the unprivileged user the alarms' commands run as")
	}
	u, err := user.Lookup(s.CommandUser)
	if err != nil {
		if _, nerr := strconv.ParseUint(s.CommandUser, 10, 32); nerr != nil {
			return 0, 0, fmt.Errorf("expressions.command_user: %q: %w", s.CommandUser, err)
		}
		if u, err = user.LookupId(s.CommandUser); err != nil {
			return 0, 0, fmt.Errorf("expressions.command_user: %q: %w", s.CommandUser, err)
		}
	}
	u64, err1 := strconv.ParseUint(u.Uid, 10, 32)
	g64, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("expressions.command_user: %q: uid %q gid %q are not numbers", s.CommandUser, u.Uid, u.Gid)
	}
	if u64 == 0 {
		return 0, 0, fmt.Errorf("expressions.command_user: %q is uid 0: the alarms' commands never run as root", s.CommandUser)
	}
	return uint32(u64), uint32(g64), nil
}

// DerivedConf is one derived statistic, served as Derived/<name>. The
// daemon keeps those created over SNMP as its JSON.
type DerivedConf struct {
	Name        string `mapstructure:"name" json:"-"`
	Expr        string `mapstructure:"expr" json:"expr"`
	Description string `mapstructure:"description" json:"description,omitempty"`
	Units       string `mapstructure:"units" json:"units,omitempty"`
	Scale       int    `mapstructure:"scale" json:"scale,omitempty"`   // decimal places served (0 to 6)
	Signed      bool   `mapstructure:"signed" json:"signed,omitempty"` // Integer32 (may be negative) instead of a 64-bit gauge
}

// AlarmConf is one alarm on an expression.
type AlarmConf struct {
	Name string `mapstructure:"name" json:"-"`
	Expr string `mapstructure:"expr" json:"expr"`
	// Rising and Falling make a value's alarm: firing from Rising up,
	// until the value is Falling or below (nil: the expression is true
	// when not 0).
	Rising   *float64 `mapstructure:"rising" json:"rising,omitempty"`
	Falling  *float64 `mapstructure:"falling" json:"falling,omitempty"`
	For      int      `mapstructure:"for" json:"for,omitempty"`   // evaluations true before firing
	Keep     int      `mapstructure:"keep" json:"keep,omitempty"` // evaluations false before clearing
	Severity int      `mapstructure:"severity" json:"severity,omitempty"`
	Cleared  bool     `mapstructure:"cleared" json:"cleared,omitempty"` // an alarmCleared notification back at inactive
	// Frequency is the least time between two notified raises of one
	// instance (0: none).
	Frequency time.Duration `mapstructure:"frequency" json:"frequency,omitempty"`
	// TrapNo, when not 0, numbers the notification a raise sends,
	// alarmTrapN (base.0.N), instead of alarmRaised: 1 to 32767, no
	// hotset's, no other alarm's (schema.CheckTrapNumbers).
	TrapNo int `mapstructure:"trap_no" json:"trap_no,omitempty"`
	// Command is run (argv, no shell) when an instance fires, and when it
	// is back at inactive with CommandOnClear. Only from the configuration
	// file: never over SNMP or the control socket (json "-").
	Command        []string `mapstructure:"command" json:"-"`
	CommandOnClear bool     `mapstructure:"command_on_clear" json:"-"`
}

// checkExpr checks the evaluation settings' ranges; the expressions are
// the derive package's to judge (daemon.Check).
func (c *Config) checkExpr(bad func(key, format string, args ...any)) {
	if iv := c.Expressions.Interval; iv < time.Second || iv > time.Hour {
		bad("expressions.interval", "%v is not from 1s to 1h", iv)
	}
	if n := c.Expressions.MaxSNMPDerived; n < 0 || n > 10000 {
		bad("expressions.max_snmp_derived", "%d is not from 0 to 10000", n)
	}
	if n := c.Expressions.MaxSNMPAlarms; n < 0 || n > 10000 {
		bad("expressions.max_snmp_alarms", "%d is not from 0 to 10000", n)
	}
	if t := c.Expressions.CommandTimeout; t < time.Second || t > time.Hour {
		bad("expressions.command_timeout", "%v is not from 1s to 1h", t)
	}
	if n := c.Expressions.CommandMax; n < 1 || n > 64 {
		bad("expressions.command_max", "%d is not from 1 to 64", n)
	}
	commands := false
	for i, a := range c.Alarms {
		key := fmt.Sprintf("alarms[%d]", i)
		if len(a.Command) == 0 {
			if a.CommandOnClear {
				bad(key+".command_on_clear", "true without a command")
			}
			continue
		}
		commands = true
		if err := checkCommand(a.Command); err != nil {
			bad(key+".command", "%v", err)
		}
	}
	// not root and no user named: the commands run as the daemon's own user
	if commands && (os.Geteuid() == 0 || c.Expressions.CommandUser != "") {
		if _, _, err := c.Expressions.CommandIDs(); err != nil {
			bad("expressions.command_user", "%v", strings.TrimPrefix(err.Error(), "expressions.command_user: "))
		}
	}
}

// checkCommand checks an alarm's argv: bounded, its program an absolute
// path to an executable regular file.
func checkCommand(argv []string) error {
	if len(argv) > MaxCommandArgs {
		return fmt.Errorf("%d arguments, at most %d", len(argv), MaxCommandArgs)
	}
	for i, a := range argv {
		if len(a) > MaxCommandArgLen || strings.IndexByte(a, 0) >= 0 {
			return fmt.Errorf("argument %d: longer than %d bytes or has a NUL", i, MaxCommandArgLen)
		}
	}
	if !filepath.IsAbs(argv[0]) {
		return fmt.Errorf("%q is not an absolute path", argv[0])
	}
	fi, err := os.Stat(argv[0])
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%q is not an executable file (mode %v)", argv[0], fi.Mode())
	}
	return nil
}
