package config

import (
	"fmt"
	"strings"
	"time"

	"github.com/perfagent/subagent/hotset"
	"github.com/perfagent/subagent/notiflog"
	"github.com/perfagent/subagent/traps"
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
	EngineID     string        `mapstructure:"engine_id"`
}

// HotsetDefs turns the configured hotsets into the engine's definitions;
// the error names the item and the field (hotsets[1].maxresp).
func (c *Config) HotsetDefs() ([]hotset.Def, error) {
	out := make([]hotset.Def, 0, len(c.Hotsets))
	seen := map[string]bool{}
	for i, h := range c.Hotsets {
		key := fmt.Sprintf("hotsets[%d]", i)
		d := hotset.Def{Name: h.Name, MaxResp: h.MaxResp, Threshold: h.Threshold, Frequency: h.Frequency,
			Severity: h.Severity, TrapNo: h.TrapNo, Rearm: h.Rearm, Cleared: h.Cleared}
		var err error
		if d.GrandParent, d.Stat, err = hotset.ParsePath(h.Stat); err != nil {
			return nil, fmt.Errorf("%s.stat: %w", key, err)
		}
		var ok bool
		if d.Feed, ok = hotset.ParseFeed(h.FeedType); !ok {
			return nil, fmt.Errorf("%s.feed_type: %q is not none, threshold or always", key, h.FeedType)
		}
		if d.Excp, ok = hotset.ParseExcp(h.ExcpType); !ok {
			return nil, fmt.Errorf("%s.excp_type: %q is not none, exception, trap or both", key, h.ExcpType)
		}
		if err := d.Validate(); err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		if seen[d.Name] {
			return nil, fmt.Errorf("%s.name: %q is already the name of another hotset", key, d.Name)
		}
		seen[d.Name] = true
		out = append(out, d)
	}
	return out, nil
}

// TrapDests are the configured destinations.
func (c *Config) TrapDests() []traps.Dest {
	out := make([]traps.Dest, len(c.Traps))
	for i, t := range c.Traps {
		out[i] = traps.Dest{Address: t.Address, Version: strings.ToLower(t.Version), Community: t.Community,
			Inform: t.Inform, Retries: t.Retries, Timeout: t.Timeout, Queue: t.Queue,
			User: t.User, AuthProto: t.AuthProtocol, AuthPass: t.AuthPassword,
			PrivProto: t.PrivProtocol, PrivPass: t.PrivPassword, EngineID: t.EngineID}
	}
	return out
}

// checkHotsets validates the hotset settings, the hotsets and the trap
// destinations, each error naming its key.
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
	if iv := c.Hotset.TreeChangedInterval; iv != 0 && (iv < time.Second || iv > 24*time.Hour) {
		bad("hotset.tree_changed_interval", "%v is not from 1s to 24h (0: none sent)", iv)
	}
	if err := notiflog.CheckLimits(c.Hotset.LogEntries, c.Hotset.LogMaxAge); err != nil {
		field, msg, _ := strings.Cut(err.Error(), ": ")
		bad("hotset.log_"+field, "%s", msg)
	}
	if _, err := c.HotsetDefs(); err != nil {
		key, msg, _ := strings.Cut(err.Error(), ": ")
		bad(key, "%s", msg)
	}
	for i, d := range c.TrapDests() {
		if err := d.Check(); err != nil {
			field, msg, _ := strings.Cut(err.Error(), ": ")
			bad(fmt.Sprintf("traps[%d].%s", i, field), "%s", msg)
		}
	}
}
