// Package config loads the daemon's settings: the embedded defaults
// (configs/subagent.yaml), then an optional file, then SUBAGENT_*
// environment variables, then command-line flags.
//
// It is plain data: it imports no domain package. It checks what a value
// allows by itself (types, ranges, enums, paths, regular expressions,
// OIDs); the rules a domain package owns (an AgentX address, a hotset, a
// trap destination, an SNMPv3 user, DDS reservations, RTime/LAN hosts)
// are that package's, run on the configuration by daemon.Check, which also
// translates it into each package's settings. Every source is strict: an
// unknown key in the file (keys.go), an unknown SUBAGENT_* variable
// (env.go) and an unknown flag (FlagError) are errors that name the
// nearest accepted one.
//
// Viper stays for what it does well here: reading YAML, layering the
// defaults, the file, the environment and the flags, and decoding into
// Config (mapstructure, with the duration and list hooks). Its leniency is
// undone by the schema in keys.go, which any decoder would need for the
// "did you mean" messages; writing the layering by hand would add a YAML
// dependency of our own for no gain.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/rundir"
	"github.com/perfagent/subagent/configs"
)

// Config is every setting of the daemon.
type Config struct {
	BaseOID string `mapstructure:"base_oid"`
	RunDir  string `mapstructure:"run_dir"`
	// RunDirDefault: run_dir was not configured, so RunDir is the
	// default of a daemon of this user; clients look further (rundir.Find).
	RunDirDefault bool          `mapstructure:"-"`
	StateDir      string        `mapstructure:"state_dir"`
	State         State         `mapstructure:"state"`
	AgentX        string        `mapstructure:"agentx"`
	Listen        string        `mapstructure:"listen"`
	Views         string        `mapstructure:"views"`
	SNMP          SNMP          `mapstructure:"snmp"`
	AgentXSession AgentXSession `mapstructure:"agentx_session"`
	SNMPSet       SNMPSet       `mapstructure:"snmp_set"`
	Refresh       Refresh       `mapstructure:"refresh"`
	Host          Host          `mapstructure:"host"`
	Control       Control       `mapstructure:"control"`
	DDS           DDS           `mapstructure:"dds"`
	RTimeLAN      RTimeLAN      `mapstructure:"rtime_lan"`
	ARM           ARM           `mapstructure:"arm"`
	Log           Log           `mapstructure:"log"`

	// Hotsets and where their notifications go (config/hotset.go).
	Hotset  HotsetSettings `mapstructure:"hotset"`
	Hotsets []HotsetConf   `mapstructure:"hotsets"`
	Traps   []TrapConf     `mapstructure:"traps"`

	// Derived statistics and alarms on expressions (config/expr.go).
	Expressions ExprSettings  `mapstructure:"expressions"`
	Derived     []DerivedConf `mapstructure:"derived"`
	Alarms      []AlarmConf   `mapstructure:"alarms"`
	// Service level objectives of ARM transactions (config/slo.go).
	SLO        SLOSettings     `mapstructure:"slo"`
	Objectives []ObjectiveConf `mapstructure:"objectives"`

	// Base is BaseOID parsed.
	Base asn1tree.OID `mapstructure:"-"`
	// File is the configuration file read, if any.
	File string `mapstructure:"-"`
}

// SNMP configures the standalone responder.
type SNMP struct {
	Community      string `mapstructure:"community"`
	MaxRepetitions int    `mapstructure:"max_repetitions"`
	MaxMsgSize     int    `mapstructure:"max_msg_size"`

	SNMPSystem `mapstructure:",squash"` // the system group (config/snmp.go)
	// Users are the SNMPv3 users (config/snmpusers.go).
	Users []SNMPUser `mapstructure:"users"`
	// Throttle bounds the SNMPv3 failures answered per source (config/snmp.go).
	Throttle SNMPThrottle `mapstructure:"throttle"`
}

// AgentXSession configures the AgentX session.
type AgentXSession struct {
	Timeout      time.Duration `mapstructure:"timeout"`
	Priority     int           `mapstructure:"priority"`
	PingInterval time.Duration `mapstructure:"ping_interval"`
	MaxBackoff   time.Duration `mapstructure:"max_backoff"`
	Description  string        `mapstructure:"description"`
}

// Refresh configures when values are read from their sources.
type Refresh struct {
	MinAge   time.Duration  `mapstructure:"min_age"`
	Interval time.Duration  `mapstructure:"interval"`
	SNMPWait time.Duration  `mapstructure:"snmp_wait"`
	Apart    []RefreshApart `mapstructure:"apart"`
	WarmFor  time.Duration  `mapstructure:"warm_for"`
	// WalkMemoryMB bounds the snapshots all walks keep alive together,
	// those of both front ends, in MiB (asn1tree.WalkBudget).
	WalkMemoryMB int `mapstructure:"walk_memory_mb"`
}

// RefreshApart gives a top-level context that is costly to read an age of
// its own: it is read apart from requests, which never wait for it.
type RefreshApart struct {
	Context string        `mapstructure:"context"`
	MaxAge  time.Duration `mapstructure:"max_age"`
}

// Host configures the host statistics.
type Host struct {
	ProcRoot      string        `mapstructure:"proc_root"`
	SysRoot       string        `mapstructure:"sys_root"`
	DiskIgnore    string        `mapstructure:"disk_ignore"`
	FSTypeIgnore  string        `mapstructure:"fs_type_ignore"`
	StatfsTimeout time.Duration `mapstructure:"statfs_timeout"`
	Disabled      []string      `mapstructure:"disabled"`
}

// DDS configures the socket where Dynamic Data Suppliers register.
type DDS struct {
	Enabled      bool          `mapstructure:"enabled"`
	Socket       string        `mapstructure:"socket"` // "" is <run_dir>/dds.sock
	Group        int           `mapstructure:"group"`  // gid of the socket; <= 0 leaves it
	AllowUIDs    []int         `mapstructure:"allow_uids"`
	AllowGIDs    []int         `mapstructure:"allow_gids"`
	StampTimeout time.Duration `mapstructure:"stamp_timeout"`
	MaxSuppliers int           `mapstructure:"max_suppliers"`
	MaxStatsAll  int           `mapstructure:"max_stats_all"`
	// The share of one user other than root and the daemon's own; 0 is a
	// quarter of the total (docs/SECURITY.md).
	MaxSuppliersPerUID int              `mapstructure:"max_suppliers_per_uid"`
	MaxStatsPerUID     int              `mapstructure:"max_stats_per_uid"`
	Reserve            []DDSReservation `mapstructure:"reserve"`
	DDSLimits          `mapstructure:",squash"`
}

// DDSReservation keeps a DDS context name (a vendor's, or a subtree) for
// some users besides root and the daemon's own (docs/DDS.md).
type DDSReservation struct {
	Context string `mapstructure:"context"`
	ASN     int    `mapstructure:"asn"` // the vendor's enterprise number too; 0: not reserved
	UIDs    []int  `mapstructure:"uids"`
	GIDs    []int  `mapstructure:"gids"`
}

// Log configures logging.
type Log struct {
	Level  string `mapstructure:"level"`
	Format string `mapstructure:"format"`
}

// Flags maps command-line flags to keys. Flags not registered on the
// command are ignored.
var Flags = map[string]string{
	"base-oid":  "base_oid",
	"run-dir":   "run_dir",
	"state-dir": "state_dir",
	"agentx":    "agentx",
	"listen":    "listen",
	"community": "snmp.community",
	"proc-root": "host.proc_root",
	"sys-root":  "host.sys_root",
	"log-level": "log.level",
}

// AddFlags registers the flags every mode understands.
func AddFlags(fs *pflag.FlagSet) {
	fs.String("config", "", "configuration file (YAML); defaults are built in")
	fs.String("base-oid", "", "OID the tree is attached under (default 1.3.6.1.4.1.32473.1)")
	fs.String("run-dir", "", "directory of the daemon's sockets")
	fs.String("state-dir", "", "directory of persisted instance numbers")
	fs.String("agentx", "", "AgentX master: unix:/path, tcp:host:port or none")
	fs.String("listen", "", "standalone SNMP responder address host:port, or none")
	fs.String("community", "", "community of the standalone responder")
	fs.String("proc-root", "", "procfs mount point")
	fs.String("sys-root", "", "sysfs mount point")
	fs.String("log-level", "", "debug, info, warn or error")
}

// FlagError adds the nearest flag of fs to pflag's error for an unknown
// flag, so that a misspelled flag is told like a misspelled key or
// variable ("did you mean --community?"); other errors are returned as
// they are.
func FlagError(fs *pflag.FlagSet, err error) error {
	if err == nil {
		return nil
	}
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return err
	}
	var names []string
	fs.VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	if near := nearest(name, names); near != "" {
		return fmt.Errorf("%w: did you mean --%s?", err, near)
	}
	return err
}

// Load reads the configuration. fs may be nil; its "config" flag names the
// file, otherwise SUBAGENT_CONFIG does.
func Load(fs *pflag.FlagSet) (*Config, error) {
	v := viper.New()
	v.SetConfigType("yaml")
	if err := v.ReadConfig(bytes.NewReader(configs.Default)); err != nil {
		return nil, fmt.Errorf("embedded default configuration: %w", err)
	}
	known := v.AllKeys()
	sch := configSchema()
	var fileErrs []error
	file := os.Getenv("SUBAGENT_CONFIG")
	if fs != nil {
		if f := fs.Lookup("config"); f != nil && f.Changed {
			file = f.Value.String()
		}
	}
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("configuration file: %w", err)
		}
		// The file alone, checked key by key: merged into the defaults, a
		// value where a section is due would be dropped without a word.
		if err := checkSyntax(b); err != nil {
			return nil, fmt.Errorf("configuration file %s: %w", file, err)
		}
		fv := viper.New()
		fv.SetConfigType("yaml")
		if err := fv.ReadConfig(bytes.NewReader(b)); err != nil {
			return nil, fmt.Errorf("configuration file %s: %w", file, err)
		}
		fileErrs = sch.checkTree("", fv.AllSettings())
		if err := v.MergeConfig(bytes.NewReader(b)); err != nil {
			return nil, fmt.Errorf("configuration file %s: %w", file, err)
		}
	}
	v.SetEnvPrefix("SUBAGENT")
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	v.AutomaticEnv()
	for _, k := range known {
		if err := v.BindEnv(k); err != nil {
			return nil, err
		}
	}
	if fs != nil {
		for flag, key := range Flags {
			if f := fs.Lookup(flag); f != nil && f.Changed {
				v.Set(key, f.Value.String())
			}
		}
	}
	// An unknown SUBAGENT_* variable is refused like an unknown key.
	keys := slices.Concat(known, slices.Collect(maps.Keys(sch.types)))
	if errs := append(fileErrs, checkEnv(os.Environ(), keys)...); len(errs) > 0 {
		return nil, fmt.Errorf("configuration%s: %w", inFile(file), errors.Join(errs...))
	}
	// Values from the environment and flags, with the file's.
	if err := sch.checkValues(v.Get); err != nil {
		return nil, fmt.Errorf("configuration%s: %w", inFile(file), err)
	}
	var c Config
	dec := viper.DecodeHook(mapstructure.ComposeDecodeHookFunc(
		mapstructure.StringToTimeDurationHookFunc(), mapstructure.StringToSliceHookFunc(",")))
	if err := v.Unmarshal(&c, dec, func(dc *mapstructure.DecoderConfig) { dc.ErrorUnused = true }); err != nil {
		return nil, fmt.Errorf("configuration%s: %w", inFile(file), err)
	}
	c.File = file
	if err := c.finish(); err != nil {
		return nil, fmt.Errorf("configuration%s: %w", inFile(file), err)
	}
	return &c, nil
}

func inFile(file string) string {
	if file == "" {
		return ""
	}
	return " " + file
}

// finish fills computed defaults and checks what a value allows by itself
// (ranges, enums, paths, regular expressions); the domain packages' own
// rules are checked by daemon.Check.
func (c *Config) finish() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{key}, args...)...))
	}
	base, err := asn1tree.Parse(c.BaseOID)
	switch {
	case err != nil:
		bad("base_oid", "%v", err)
	case len(base) < 2 || len(base) > 100:
		bad("base_oid", "%q must have 2 to 100 sub-identifiers", c.BaseOID)
	}
	c.Base = base
	if c.RunDir == "" {
		c.RunDir, c.RunDirDefault = defaultRunDir(), true
	}
	if c.StateDir == "" {
		c.StateDir = defaultStateDir()
	}
	if c.Listen != "none" && !strings.Contains(c.Listen, ":") {
		bad("listen", "%q is not host:port or none", c.Listen)
	}
	if c.SNMP.Community == "" && len(c.SNMP.Users) == 0 {
		bad("snmp.community", "must not be empty without snmp.users (\"\" turns SNMPv1/v2c off where SNMPv3 users are configured)")
	}
	c.SNMP.checkUsers(bad)
	c.SNMP.Throttle.check(bad)
	if c.SNMP.MaxRepetitions < 1 || c.SNMP.MaxRepetitions > 10000 {
		bad("snmp.max_repetitions", "%d is not from 1 to 10000", c.SNMP.MaxRepetitions)
	}
	if c.SNMP.MaxMsgSize < 484 || c.SNMP.MaxMsgSize > 65507 {
		bad("snmp.max_msg_size", "%d is not from 484 to 65507", c.SNMP.MaxMsgSize)
	}
	s := c.AgentXSession
	if s.Timeout < time.Second || s.Timeout > 255*time.Second {
		bad("agentx_session.timeout", "%v is not from 1s to 255s", s.Timeout)
	}
	if s.Priority < 1 || s.Priority > 255 {
		bad("agentx_session.priority", "%d is not from 1 to 255", s.Priority)
	}
	if s.PingInterval < 0 {
		bad("agentx_session.ping_interval", "%v is negative", s.PingInterval)
	}
	if s.MaxBackoff < 10*time.Millisecond {
		bad("agentx_session.max_backoff", "%v is below 10ms", s.MaxBackoff)
	}
	if c.Refresh.MinAge < 0 || c.Refresh.Interval < 0 || c.Refresh.SNMPWait < 0 {
		bad("refresh", "durations must not be negative")
	}
	if c.Refresh.MinAge > 10*time.Second {
		bad("refresh.min_age", "%v is above 10s; a reader asking for values newer than its last ones waits up to min_age, and clients give up after 30s", c.Refresh.MinAge)
	}
	if c.Refresh.SNMPWait > 900*time.Millisecond {
		bad("refresh.snmp_wait", "%v is above 900ms; the AgentX master gives up after 1s", c.Refresh.SNMPWait)
	}
	if m := c.Refresh.WalkMemoryMB; m < 1 || m > 65536 {
		bad("refresh.walk_memory_mb", "%d is not from 1 to 65536 (MiB)", m)
	}
	if w := c.Refresh.WarmFor; w < time.Second || w > 24*time.Hour {
		bad("refresh.warm_for", "%v is not from 1s to 24h", w)
	}
	seen := map[string]bool{}
	for i, a := range c.Refresh.Apart {
		key := fmt.Sprintf("refresh.apart[%d]", i)
		switch {
		case a.Context == "" || strings.Contains(a.Context, "/"):
			bad(key+".context", "%q is not the name of a top-level context", a.Context)
		case seen[a.Context]:
			bad(key+".context", "%q is listed twice", a.Context)
		}
		seen[a.Context] = true
		if a.MaxAge < time.Second || a.MaxAge > time.Hour {
			bad(key+".max_age", "%v is not from 1s to 1h", a.MaxAge)
		}
	}
	if c.Host.StatfsTimeout <= 0 {
		bad("host.statfs_timeout", "%v must be positive", c.Host.StatfsTimeout)
	}
	switch c.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		bad("log.level", "%q is not debug, info, warn or error", c.Log.Level)
	}
	if c.Log.Format != "text" && c.Log.Format != "json" {
		bad("log.format", "%q is not text or json", c.Log.Format)
	}
	for _, r := range []struct{ key, expr string }{{"host.disk_ignore", c.Host.DiskIgnore}, {"host.fs_type_ignore", c.Host.FSTypeIgnore}} {
		if _, err := regexp.Compile(r.expr); err != nil {
			bad(r.key, "%q is not a regular expression (Go RE2 syntax): %v", r.expr, err)
		}
	}
	// An empty dds.socket follows the run directory, which the daemon
	// settles (daemon.prepareDirs): a run_dir changed after loading is
	// followed too.
	if t := c.DDS.StampTimeout; t < 15*time.Second || t > 600*time.Second {
		bad("dds.stamp_timeout", "%v is not from 15s to 600s", t)
	}
	if n := c.DDS.MaxStatsAll; n < 1 || n > 1<<24 {
		bad("dds.max_stats_all", "%d is not from 1 to 16777216", n)
	}
	if n := c.DDS.MaxSuppliers; n < 1 || n > 10000 {
		bad("dds.max_suppliers", "%d is not from 1 to 10000", n)
	}
	for _, f := range []struct {
		key, totalKey string
		v, total      int
	}{
		{"dds.max_suppliers_per_uid", "dds.max_suppliers", c.DDS.MaxSuppliersPerUID, c.DDS.MaxSuppliers},
		{"dds.max_stats_per_uid", "dds.max_stats_all", c.DDS.MaxStatsPerUID, c.DDS.MaxStatsAll},
	} {
		if f.v < 0 || f.v > f.total {
			bad(f.key, "%d is not from 0 (a quarter of %s) to %s (%d)", f.v, f.totalKey, f.totalKey, f.total)
		}
	}
	for i, r := range c.DDS.Reserve {
		key := fmt.Sprintf("dds.reserve[%d]", i)
		if r.ASN < 0 || r.ASN > math.MaxUint32 {
			bad(key+".asn", "%d is not an enterprise number (0 to 4294967295)", r.ASN)
		}
		checkIDs(bad, key+".uids", r.UIDs)
		checkIDs(bad, key+".gids", r.GIDs)
	}
	c.State.check(bad)
	c.SNMPSet.check(bad)
	c.RTimeLAN.check(bad)
	c.ARM.check(c.State.MaxNamesPerContext, bad)
	c.checkHotsets(bad)
	c.checkExpr(bad)
	c.checkObjectives(bad)
	c.Control.check(bad)
	switch c.Views {
	case "both", "scalars", "tables":
	default:
		bad("views", "%q is not both, scalars or tables", c.Views)
	}
	checkIDs(bad, "dds.allow_uids", c.DDS.AllowUIDs)
	checkIDs(bad, "dds.allow_gids", c.DDS.AllowGIDs)
	for _, p := range []struct{ key, dir string }{{"run_dir", c.RunDir}, {"state_dir", c.StateDir}, {"host.proc_root", c.Host.ProcRoot}, {"host.sys_root", c.Host.SysRoot}, {"dds.socket", c.DDS.Socket}} {
		// Empty run_dir, state_dir (and so dds.socket): no safe default
		// here; the daemon makes private directories, clients refuse.
		if p.dir == "" && (p.key == "run_dir" || p.key == "state_dir" || p.key == "dds.socket") {
			continue
		}
		if !filepath.IsAbs(p.dir) {
			bad(p.key, "%q is not an absolute path", p.dir)
		}
	}
	return errors.Join(errs...)
}

// geteuid is os.Geteuid; tests choose the uid of the defaults.
var geteuid = os.Geteuid

// defaultRunDir is the run directory of a daemon of this user, "" when
// there is none that only this user could have made (client/rundir, the
// one owner of the order).
func defaultRunDir() string { return rundir.DefaultFor(geteuid(), os.Getenv("XDG_RUNTIME_DIR")) }

// defaultStateDir is like defaultRunDir for the state directory.
func defaultStateDir() string {
	if geteuid() == 0 {
		return "/var/lib/subagent"
	}
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "subagent")
	}
	if h, err := os.UserHomeDir(); err == nil && filepath.IsAbs(h) {
		return filepath.Join(h, ".local", "state", "subagent")
	}
	return ""
}
