package config

import (
	"fmt"
	"time"
)

// HotsetSettings configure the evaluation of the hotsets.
type HotsetSettings struct {
	Interval   time.Duration `mapstructure:"interval"`   // between evaluations
	Exceptions int           `mapstructure:"exceptions"` // recent exceptions kept per hotset
	// MaxSNMPRows bounds the hotsetDefTable rows created over SNMP.
	MaxSNMPRows int `mapstructure:"max_snmp_rows"`
	// LogEntries and LogMaxAge bound the notification log (notiflog).
	LogEntries int           `mapstructure:"log_entries"`
	LogMaxAge  time.Duration `mapstructure:"log_max_age"`
	// TreeChangedInterval is the least interval between two tree changed
	// notifications (the directory's generation changed); 0: none sent.
	TreeChangedInterval time.Duration `mapstructure:"tree_changed_interval"`
	// NotifyBurst and NotifyInterval bound each hotset's notifications
	// across all its peer sets: NotifyBurst at once, then one per
	// NotifyInterval (hotset.Limit); a hotset may set its own.
	NotifyBurst    int           `mapstructure:"notify_burst"`
	NotifyInterval time.Duration `mapstructure:"notify_interval"`
}

// HotsetConf is one hotset (SpmiAddSetHot's parameters, named).
type HotsetConf struct {
	Name      string        `mapstructure:"name"`
	Stat      string        `mapstructure:"stat"` // Disk/*/busy
	MaxResp   int           `mapstructure:"maxresp"`
	Threshold int           `mapstructure:"threshold"`
	Frequency time.Duration `mapstructure:"frequency"`
	FeedType  string        `mapstructure:"feed_type"`
	ExcpType  string        `mapstructure:"excp_type"`
	Severity  int           `mapstructure:"severity"`
	TrapNo    int           `mapstructure:"trap_no"`
	Rearm     int           `mapstructure:"rearm"`   // falling threshold (hotset.Def.Rearm); 0: none
	Cleared   bool          `mapstructure:"cleared"` // a cleared notification when a peer re-arms
	// The hotset's own notify_burst and notify_interval; 0: hotset.*'s.
	NotifyBurst    int           `mapstructure:"notify_burst"`
	NotifyInterval time.Duration `mapstructure:"notify_interval"`
}

// TrapConf is one destination of notifications sent directly.
type TrapConf struct {
	Address      string        `mapstructure:"address"`
	Version      string        `mapstructure:"version"`
	Community    string        `mapstructure:"community"`
	Inform       bool          `mapstructure:"inform"`
	Retries      int           `mapstructure:"retries"`
	Timeout      time.Duration `mapstructure:"timeout"`
	Queue        int           `mapstructure:"queue"`
	User         string        `mapstructure:"user"`
	AuthProtocol string        `mapstructure:"auth_protocol"`
	AuthPassword string        `mapstructure:"auth_password"`
	PrivProtocol string        `mapstructure:"priv_protocol"`
	PrivPassword string        `mapstructure:"priv_password"`
	// EngineID is refused (checkHotsets): v3 traps are sent from the
	// agent's one engine, snmpEngineID.0 of the state directory.
	EngineID string `mapstructure:"engine_id"`
}

// checkHotsets checks the hotset settings' ranges; the hotsets, the
// notification log's limits and the trap destinations are the engine's,
// the log's and the sender's to judge (daemon.Check).
func (c *Config) checkHotsets(bad func(key, format string, args ...any)) {
	if iv := c.Hotset.Interval; iv < time.Second || iv > time.Hour {
		bad("hotset.interval", "%v is not from 1s to 1h", iv)
	}
	if n := c.Hotset.Exceptions; n < 1 || n > 1000 {
		bad("hotset.exceptions", "%d is not from 1 to 1000", n)
	}
	if n := c.Hotset.MaxSNMPRows; n < 0 || n > 10000 {
		bad("hotset.max_snmp_rows", "%d is not from 0 to 10000", n)
	}
	for i, t := range c.Traps {
		if t.EngineID != "" {
			bad(fmt.Sprintf("traps[%d].engine_id", i), "no longer set per destination: v3 traps now use the agent's snmpEngineID.0 "+
				"(engine_id in <state_dir>/snmp-engine, the responder's), which the receiver must know; remove the key")
		}
	}
	if iv := c.Hotset.TreeChangedInterval; iv != 0 && (iv < time.Second || iv > 24*time.Hour) {
		bad("hotset.tree_changed_interval", "%v is not from 1s to 24h (0: none sent)", iv)
	}
	checkLimit(bad, "hotset.", c.Hotset.NotifyBurst, c.Hotset.NotifyInterval, false)
	for i, h := range c.Hotsets {
		checkLimit(bad, fmt.Sprintf("hotsets[%d].", i), h.NotifyBurst, h.NotifyInterval, true)
	}
}

// checkLimit checks a notification rate limit; a hotset's own may leave
// either key 0, for the default.
func checkLimit(bad func(key, format string, args ...any), prefix string, burst int, iv time.Duration, zero bool) {
	dflt := ""
	if zero {
		dflt = " (0: hotset's)"
	}
	if (burst != 0 || !zero) && (burst < 1 || burst > maxNotifyBurst) {
		bad(prefix+"notify_burst", "%d is not from 1 to %d%s", burst, maxNotifyBurst, dflt)
	}
	if (iv != 0 || !zero) && (iv < time.Second || iv > 24*time.Hour) {
		bad(prefix+"notify_interval", "%v is not from 1s to 24h%s", iv, dflt)
	}
}

// maxNotifyBurst is hotset.MaxBurst (config imports no domain package).
const maxNotifyBurst = 10000
