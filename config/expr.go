package config

import "time"

// ExprSettings configure the evaluation of derived statistics and alarms
// (docs/EXPRESSIONS.md).
type ExprSettings struct {
	// Interval is the time between two evaluations: counters are read as
	// rates over it, and an alarm's for and keep count evaluations.
	Interval time.Duration `mapstructure:"interval"`
}

// DerivedConf is one derived statistic, served as Derived/<name>.
type DerivedConf struct {
	Name        string `mapstructure:"name"`
	Expr        string `mapstructure:"expr"`
	Description string `mapstructure:"description"`
	Units       string `mapstructure:"units"`
	Scale       int    `mapstructure:"scale"`  // decimal places served (0 to 6)
	Signed      bool   `mapstructure:"signed"` // Integer32 (may be negative) instead of a 64-bit gauge
}

// AlarmConf is one alarm on an expression.
type AlarmConf struct {
	Name string `mapstructure:"name"`
	Expr string `mapstructure:"expr"`
	// Rising and Falling make a value's alarm: firing from Rising up,
	// until the value is Falling or below (nil: the expression is true
	// when not 0).
	Rising   *float64 `mapstructure:"rising"`
	Falling  *float64 `mapstructure:"falling"`
	For      int      `mapstructure:"for"`  // evaluations true before firing
	Keep     int      `mapstructure:"keep"` // evaluations false before clearing
	Severity int      `mapstructure:"severity"`
	Cleared  bool     `mapstructure:"cleared"` // an alarmCleared notification back at inactive
}

// checkExpr checks the evaluation settings' ranges; the expressions are
// the derive package's to judge (daemon.Check).
func (c *Config) checkExpr(bad func(key, format string, args ...any)) {
	if iv := c.Expressions.Interval; iv < time.Second || iv > time.Hour {
		bad("expressions.interval", "%v is not from 1s to 1h", iv)
	}
}
