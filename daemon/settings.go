package daemon

import (
	"errors"
	"fmt"
	"strings"

	"github.com/perfagent/subagent/agentx"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/config"
	"github.com/perfagent/subagent/dds"
	"github.com/perfagent/subagent/hotset"
	"github.com/perfagent/subagent/notiflog"
	"github.com/perfagent/subagent/responder"
	"github.com/perfagent/subagent/rtimelan"
	"github.com/perfagent/subagent/traps"
	"github.com/perfagent/subagent/usm"
)

// The configuration (config/) is plain data that checks what each value
// allows by itself. This file translates it into the domain packages'
// settings and has each package judge its own (Check), every error naming
// the configuration key.

// Check runs the domain packages' rules on c, which config.Load has
// checked: the AgentX address, the system group's strings, the SNMPv3
// users, the DDS reservations and limits, RTime/LAN's hosts, the
// notification log's limits, the hotsets and the trap destinations. New
// calls it, and so must whatever loads a configuration to reload it.
func Check(c *config.Config) error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{key}, args...)...))
	}
	if c.AgentX != "none" {
		if _, _, err := agentx.ParseAddress(c.AgentX); err != nil {
			bad("agentx", "%v (want unix:/path, tcp:host:port or none)", err)
		}
	}
	checkUsers(c.SNMP.Users, bad)
	s := c.SNMP.SNMPSystem
	for _, f := range []struct{ key, v string }{
		{"snmp.sys_descr", s.SysDescr}, {"snmp.sys_contact", s.SysContact},
		{"snmp.sys_name", s.SysName}, {"snmp.sys_location", s.SysLocation},
	} {
		if err := responder.CheckDisplayString(f.v); err != nil {
			bad(f.key, "%v (a DisplayString: at most 255 bytes of text)", err)
		}
	}
	if err := dds.CheckReservations(ddsReservations(c.DDS)); err != nil {
		errs = append(errs, err)
	}
	checkDDSLimits(c.DDS.DDSLimits, bad)
	if err := rtimelan.Check(RTimeLANSettings(c.RTimeLAN)); err != nil {
		bad("rtime_lan.hosts", "%v", err)
	}
	if err := notiflog.CheckLimits(c.Hotset.LogEntries, c.Hotset.LogMaxAge); err != nil {
		field, msg, _ := strings.Cut(err.Error(), ": ")
		bad("hotset.log_"+field, "%s", msg)
	}
	if _, err := hotsetDefs(c); err != nil {
		key, msg, _ := strings.Cut(err.Error(), ": ")
		bad(key, "%s", msg)
	}
	if err := checkExpressions(c); err != nil {
		errs = append(errs, err)
	}
	for i, d := range trapDests(c) {
		if err := d.Check(); err != nil {
			field, msg, _ := strings.Cut(err.Error(), ": ")
			bad(fmt.Sprintf("traps[%d].%s", i, field), "%s", msg)
		}
	}
	if err := errors.Join(errs...); err != nil {
		if c.File != "" {
			return fmt.Errorf("configuration %s: %w", c.File, err)
		}
		return fmt.Errorf("configuration: %w", err)
	}
	return nil
}

// placeholder stands for a password that a file holds, so that the rest
// is checked before the daemon reads the file (responderUsers).
const placeholder = "password-in-a-file"

// userCredentials are u's as usm validates them; passwords in files are
// placeholders.
func userCredentials(u config.SNMPUser) usm.Credentials {
	c := usm.Credentials{User: u.User, AuthProto: u.AuthProtocol, AuthPass: u.AuthPassword,
		PrivProto: u.PrivProtocol, PrivPass: u.PrivPassword}
	if u.AuthPasswordFile != "" {
		c.AuthPass = placeholder
	}
	if u.PrivPasswordFile != "" {
		c.PrivPass = placeholder
	}
	return c
}

// checkUsers checks snmp.users by usm's rules, and the daemon's: names
// once each, no DES, MD5 only where allowed.
func checkUsers(users []config.SNMPUser, bad func(key, format string, args ...any)) {
	seen := map[string]bool{}
	for i, u := range users {
		key := fmt.Sprintf("snmp.users[%d]", i)
		c, err := userCredentials(u).Norm()
		if err != nil {
			field, msg, _ := strings.Cut(err.Error(), ": ")
			bad(key+"."+field, "%s", msg)
			continue
		}
		if seen[c.User] {
			bad(key+".user", "%q is already another user's name", c.User)
		}
		seen[c.User] = true
		if c.PrivProto == "DES" {
			bad(key+".priv_protocol", "DES is refused (broken); use AES, AES192, AES256, AES192C or AES256C")
		}
		if c.AuthProto == "MD5" && !u.AllowMD5 {
			bad(key+".auth_protocol", "MD5 is refused unless allow_md5 is true; prefer SHA256 or stronger")
		}
	}
}

// ddsReservations is dds.reserve in the supplier server's form.
func ddsReservations(d config.DDS) []dds.Reservation {
	out := make([]dds.Reservation, len(d.Reserve))
	for i, r := range d.Reserve {
		out[i] = dds.Reservation{Context: r.Context, ASN: uint32(r.ASN), UIDs: config.UIDs(r.UIDs), GIDs: config.UIDs(r.GIDs)}
	}
	return out
}

// ddsLimits is the supplier server's form of the limits.
func ddsLimits(l config.DDSLimits) ddswire.Limits {
	return ddswire.Limits{MaxContexts: l.MaxContexts, MaxTemplates: l.MaxTemplates, MaxStats: l.MaxStats,
		MaxStatsTotal: l.MaxStatsTotal, MaxArea: uint32(l.MaxArea)}
}

// checkDDSLimits checks the limits against the wire format's ceilings.
func checkDDSLimits(d config.DDSLimits, bad func(key, format string, args ...any)) {
	c := ddswire.Ceilings()
	config.CheckRanges(bad,
		config.Range{Key: "dds.max_contexts", V: d.MaxContexts, Min: 1, Max: c.MaxContexts},
		config.Range{Key: "dds.max_templates", V: d.MaxTemplates, Min: 1, Max: c.MaxTemplates},
		config.Range{Key: "dds.max_stats", V: d.MaxStats, Min: 1, Max: c.MaxStats},
		config.Range{Key: "dds.max_stats_total", V: d.MaxStatsTotal, Min: 1, Max: c.MaxStatsTotal})
	if a := d.MaxArea; a < 8 || a > int(c.MaxArea) || a%8 != 0 {
		bad("dds.max_area", "%d is not a multiple of 8 from 8 to %d (bytes)", a, c.MaxArea)
	}
}

// RTimeLANSettings is the monitor's form of the rtime_lan settings.
func RTimeLANSettings(r config.RTimeLAN) rtimelan.Settings {
	return rtimelan.Settings{
		Interval: r.Interval, MaxRate: r.MaxRate, Weight: r.Weight, Timeout: r.Timeout,
		Hosts: append([]string(nil), r.Hosts...), ByReference: r.ByReference, MaxHosts: r.MaxHosts,
		Refuse: append([]string(nil), r.Refuse...),
	}
}

// hotsetDefs turns the configured hotsets into the engine's definitions;
// the error names the item and the field (hotsets[1].maxresp).
func hotsetDefs(c *config.Config) ([]hotset.Def, error) {
	out := make([]hotset.Def, 0, len(c.Hotsets))
	seen := map[string]bool{}
	for i, h := range c.Hotsets {
		key := fmt.Sprintf("hotsets[%d]", i)
		d := hotset.Def{Name: h.Name, MaxResp: h.MaxResp, Threshold: h.Threshold, Frequency: h.Frequency,
			Severity: h.Severity, TrapNo: h.TrapNo, Rearm: h.Rearm, Cleared: h.Cleared,
			Limit: hotset.Limit{Burst: h.NotifyBurst, Every: h.NotifyInterval}}
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

// hotsetLimit is the hotsets' default notification rate limit.
func hotsetLimit(c *config.Config) hotset.Limit {
	return hotset.Limit{Burst: c.Hotset.NotifyBurst, Every: c.Hotset.NotifyInterval}
}

// trapDests are the configured notification destinations.
func trapDests(c *config.Config) []traps.Dest {
	out := make([]traps.Dest, len(c.Traps))
	for i, t := range c.Traps {
		out[i] = traps.Dest{Address: t.Address, Version: strings.ToLower(t.Version), Community: t.Community,
			Inform: t.Inform, Retries: t.Retries, Timeout: t.Timeout, Queue: t.Queue,
			User: t.User, AuthProto: t.AuthProtocol, AuthPass: t.AuthPassword,
			PrivProto: t.PrivProtocol, PrivPass: t.PrivPassword}
	}
	return out
}
