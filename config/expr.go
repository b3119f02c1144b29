package config

import "time"

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
}
