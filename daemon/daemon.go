// Package daemon wires the subagent together: the hierarchy of host
// statistics, the control socket, the SNMP front ends, and their lifetimes.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/config"
	"github.com/perfagent/subagent/control"
	"github.com/perfagent/subagent/directory"
	"github.com/perfagent/subagent/hoststats"
	"github.com/perfagent/subagent/internal/unixsock"
	"github.com/perfagent/subagent/rtimelan"
	"github.com/perfagent/subagent/settable"
	"github.com/perfagent/subagent/spmi"
)

// NumberingFile is the file in the state directory that keeps every
// persisted number: allocated instance numbers, ARM transactions,
// RTime/LAN hosts (loadNumbering).
const NumberingFile = "numbering.json"

// HostConfig turns the host settings into the providers' configuration.
func HostConfig(c *config.Config) hoststats.Config {
	dis := map[string]bool{}
	for _, n := range c.Host.Disabled {
		dis[n] = true
	}
	return hoststats.Config{
		ProcRoot: c.Host.ProcRoot, SysRoot: c.Host.SysRoot,
		DiskIgnore: c.Host.DiskIgnore, FSTypeIgnore: c.Host.FSTypeIgnore,
		StatfsTimeout: c.Host.StatfsTimeout, Disabled: dis,
	}
}

// NewHierarchy builds the hierarchy of the host statistics the
// configuration asks for. numbering may be nil (numbers kept in memory).
func NewHierarchy(c *config.Config, num *spmi.Numbering, log *slog.Logger) (*spmi.Hierarchy, []spmi.Provider, error) {
	known := map[string]bool{}
	for _, n := range hoststats.Names() {
		known[n] = true
	}
	for _, n := range c.Host.Disabled {
		if !known[n] {
			return nil, nil, fmt.Errorf("configuration: host.disabled: %q is not one of %s", n, strings.Join(hoststats.Names(), ", "))
		}
	}
	provs, err := hoststats.Providers(HostConfig(c))
	if err != nil {
		return nil, nil, fmt.Errorf("configuration: %w", hostKeyErr(err))
	}
	maxAge := map[string]time.Duration{}
	for i, a := range c.Refresh.Apart {
		if !known[a.Context] {
			return nil, nil, fmt.Errorf("configuration: refresh.apart[%d].context: %q is not one of %s", i, a.Context, strings.Join(hoststats.Names(), ", "))
		}
		maxAge[a.Context] = a.MaxAge
	}
	h := spmi.NewHierarchy(spmi.Config{Base: c.Base, MinAge: c.Refresh.MinAge, MaxAge: maxAge, WarmFor: c.Refresh.WarmFor,
		Numbering: num, Logger: log, Views: views(c.Views), Spell: rtimelan.CanonicalPath})
	for _, p := range provs {
		h.Add(p)
	}
	return h, provs, nil
}

// hostKeys names the hoststats.Config fields as configuration keys, with
// what each allows.
var hostKeys = map[string]struct{ key, want string }{
	"ProcRoot":         {"host.proc_root", "the mount point of procfs, such as /proc"},
	"SysRoot":          {"host.sys_root", "the mount point of sysfs, such as /sys (or disable Disk and LAN)"},
	"ProcRoot/SysRoot": {"host.proc_root or host.sys_root", "the mount points of procfs and sysfs"},
	"DiskIgnore":       {"host.disk_ignore", "a regular expression (Go RE2 syntax)"},
	"FSTypeIgnore":     {"host.fs_type_ignore", "a regular expression (Go RE2 syntax)"},
	"Disabled":         {"host.disabled", "names of top-level contexts"},
}

// hostKeyErr turns a hoststats field error into one naming the key, so
// that users see host.disk_ignore rather than DiskIgnore.
func hostKeyErr(err error) error {
	var fe *hoststats.FieldError
	if !errors.As(err, &fe) {
		return err
	}
	k, ok := hostKeys[fe.Field]
	if !ok {
		return err
	}
	return fmt.Errorf("%s: %w; want %s", k.key, fe.Err, k.want)
}

// Daemon is the running subagent.
type Daemon struct {
	cfg   *config.Config
	log   *slog.Logger
	h     *spmi.Hierarchy
	num   *spmi.Numbering // every persisted number (numbering.go)
	agent *agentProvider
	hot   *hotsets
	expr  *expressions // derived statistics and alarms (derive.go)
	slod  *sloDefs     // the objectives: configured and created (slowrite.go)
	rtl   *rtimeLAN
	// engine is the agent's one SNMPv3 engine (snmpv3.go).
	engine *engineState
	dir    *directory.Directory // the tree described, its generation (tree.go)
	// writer is the tables managers write over SNMP (snmpwrite.go).
	writer *settable.Writer

	private []string     // directories it made (mkdtemp, or the run directory), removed by Run
	dirs    []dirSpec    // the directories Run makes when missing (prepareDirs)
	migrate func() error // writes the merge of older state files; nil: none (loadNumbering)

	// OnReady, when set, is called once Run serves (sd_notify READY=1).
	OnReady func()

	reloading sync.Mutex // held by Reload
	// traps makes a trap number's check and its commit one step: held by
	// Reload and by each commit of a hotset or alarm made at run time
	// (trapnumbers.go).
	traps     sync.Mutex
	mu        sync.Mutex
	frontends []Frontend
	reloaders []Reloader
	loaded    *config.Config // as given to New; nil: cfg
	applied   *config.Config // by the last reload; nil: loaded
}

// Frontend is a part of the daemon that serves the tree (the AgentX
// subagent, the standalone responder). Run serves until ctx is done.
type Frontend interface {
	Name() string
	Run(ctx context.Context) error
}

// New prepares a daemon; nothing runs until Run, and nothing is written:
// a configuration the domain packages refuse (Check), a directory not
// safe to use, a damaged state file are refused here, before anything
// starts. Only the private directories of a user without a run or state
// directory are made (removed again by Run, or by Discard when Run is not
// called).
func New(c *config.Config, log *slog.Logger) (*Daemon, error) {
	if err := Check(c); err != nil {
		return nil, err
	}
	loaded := *c // reloads compare with this, not with the paths filled below
	// The directories are checked before any state is loaded from them.
	private, dirs, err := prepareDirs(c, log)
	if err != nil {
		return nil, err
	}
	made := false
	defer func() {
		if !made {
			removeDirs(private)
		}
	}()
	num, migrate, rtlErr, err := loadNumbering(c, log)
	if err != nil {
		return nil, err
	}
	h, provs, err := NewHierarchy(c, num, log)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(provs)+1)
	for _, p := range provs {
		names = append(names, p.Name())
	}
	if c.DDS.Enabled {
		names = append(names, ddswire.Root)
	}
	if c.ARM.Enabled || c.RTimeLAN.Enabled {
		names = append(names, spmi.RTimeCx.Name) // one name for RTime/ARM and RTime/LAN
	}
	names = append(names, "Agent", "Hotset", "Derived", "Alarm")
	a := &agentProvider{start: time.Now(), h: h, pid: os.Getpid(), names: func() []string { return names }}
	h.Add(a)
	d := &Daemon{cfg: c, log: log, h: h, num: num, agent: a, private: private, dirs: dirs, migrate: migrate,
		engine: &engineState{dir: c.StateDir, log: log}}
	d.loaded = &loaded
	if needsEngine(c) {
		// Loaded (and checked) now; counted on disk by Run.
		if _, err := d.engine.get(); err != nil {
			if i := hasV3(trapDests(c)); i >= 0 {
				return nil, fmt.Errorf("traps[%d]: SNMPv3 is sent from the agent's engine: %w; make the state directory writable by the daemon's user, or choose another with --state-dir", i, err)
			}
		}
	}
	d.initRTimeLAN(rtlErr)
	if err := d.initHotsets(); err != nil {
		return nil, err
	}
	if err := d.initExpressions(); err != nil {
		return nil, err
	}
	d.initWritable()
	made = true
	return d, nil
}

// Hierarchy is the tree the daemon serves.
func (d *Daemon) Hierarchy() *spmi.Hierarchy { return d.h }

// addFrontend adds a front end started by Run.
func (d *Daemon) addFrontend(f Frontend) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.frontends = append(d.frontends, f)
}

// addAgentStats adds statistics of a front end to the Agent context.
func (d *Daemon) addAgentStats(e Extra) { d.agent.addExtra(e) }

// Discard removes what New made (private directories) when Run is not
// called: the start failed before it.
func (d *Daemon) Discard() { removeDirs(d.private) }

// Binder is a front end whose socket Run binds before the start is
// counted (Bind), so that an address that cannot be bound refuses the
// start; release closes it when the start fails before Run serves it.
type Binder interface {
	Bind() (release func(), err error)
}

// Run serves until ctx is done. A front end that fails stops the daemon
// with its error; everything started is stopped before Run returns.
//
// Everything that can refuse the start comes first: the directories,
// another daemon on the control socket or on the state directory (its
// lock; the temporary files of saves a crash interrupted are removed
// once it is held), the DDS and ARM sockets, the
// front ends' sockets. A refused start leaves no trace: what it made is
// removed, and nothing is written. Then, when the start can no longer
// fail, the engine's boots and merged state files are written, right
// before anything answers or sends.
func (d *Daemon) Run(ctx context.Context) (err error) {
	defer func() { removeDirs(d.private) }()
	var undo []func() // run in reverse when the start fails
	defer func() {
		if err != nil {
			for _, f := range slices.Backward(undo) {
				f()
			}
		}
	}()
	var made []string // directories made, removed when the start fails
	undo = append(undo, func() { removeMade(made) })
	// A run directory that exists may be another daemon's: the control
	// socket says so before anything else is made.
	run := d.dirs[0]
	runDir := ""
	if mkdirOwn(run.dir, run.mode) {
		madeRunDirs.Store(run.dir, true)
		runDir = run.dir
		made = append(made, runDir)
	}
	m, err := makeDirs(d.dirs[:1])
	if err != nil {
		return err
	}
	made = append(made, m...)
	ln, err := control.Listen(d.cfg.RunDir, controlAccess(d.cfg.Control), d.log)
	if err != nil {
		return err
	}
	defer ln.Close()
	undo = append(undo, func() { ln.Close() })
	sock := ln.Path()
	if m, err = makeDirs(d.dirs[1:]); err != nil {
		return err
	}
	made = append(made, m...)
	unlock, err := lockStateDir(d.cfg.StateDir)
	if err != nil {
		return err
	}
	defer unlock()

	serveDDS, closeDDS, err := d.startDDS()
	if err != nil {
		return err
	}
	undo = append(undo, closeDDS)
	serveARM, closeARM, err := d.startARM()
	if err != nil {
		return err
	}
	undo = append(undo, closeARM)
	d.mu.Lock()
	frontends := slices.Clone(d.frontends)
	d.mu.Unlock()
	for _, f := range frontends {
		if b, ok := f.(Binder); ok {
			release, err := b.Bind()
			if err != nil {
				return fmt.Errorf("%s: %w", f.Name(), err)
			}
			undo = append(undo, release)
		}
	}
	removeSaveTemps(d.cfg.StateDir, d.log)
	if d.migrate != nil {
		if err := d.migrate(); err != nil {
			return err
		}
	}
	if err := d.engine.serve(); err != nil {
		return fmt.Errorf("%w; make the state directory writable by the daemon's user, or choose another with --state-dir", err)
	}
	undo = nil // the start is counted: it cannot be refused any more
	if runDir != "" {
		d.private = append(d.private, runDir) // removed, when empty, as the daemon stops
	}
	d.hot.notes.Start()
	serveRTL := d.startRTimeLAN()
	snap := d.h.Refresh()
	d.logServes(snap)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 16) // room for every part started below
	var wg sync.WaitGroup
	start := func(name string, f func(context.Context) error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(ctx); err != nil && ctx.Err() == nil {
				errc <- fmt.Errorf("%s: %w", name, err)
			}
		}()
	}
	srv := &control.Server{H: d.h, Log: d.log, Version: Version, Access: controlAccess(d.cfg.Control), Exprs: exprStore{d}, SLOs: sloStore{d}}
	start("control socket", func(ctx context.Context) error { return srv.Serve(ctx, ln) })
	start("refresh", func(ctx context.Context) error { d.h.Run(ctx, d.cfg.Refresh.Interval); return nil })
	start("hotsets", func(ctx context.Context) error { return d.hot.run(ctx, d.h) })
	start("expressions", func(ctx context.Context) error { return d.expr.run(ctx, d.h) })
	if serveDDS != nil {
		start("dds", serveDDS)
	}
	if serveARM != nil {
		start("arm", serveARM)
	}
	if serveRTL != nil {
		start("rtime_lan", serveRTL)
	}
	for _, f := range frontends {
		start(f.Name(), f.Run)
	}
	d.log.Info("control socket ready", "path", sock)
	if d.OnReady != nil {
		d.OnReady()
	}

	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-errc:
		d.log.Error("stopping", "err", runErr)
	}
	cancel()
	wg.Wait()
	d.h.Close() // nothing asks any more: the readings under way end, memory is no longer returned
	d.log.Info("stopped")
	return runErr
}

func (d *Daemon) logServes(s *spmi.Snapshot) {
	var tops []string
	for _, c := range s.Top.Children {
		tops = append(tops, fmt.Sprintf("%s=%d", strings.TrimSuffix(c.Path, "/"), c.ASN))
	}
	sort.Strings(tops)
	d.log.Info("serving the data hierarchy", "base", s.Base.String(), "statistics", s.NumStats,
		"with_values", s.ViewLen(), "contexts", strings.Join(tops, " "), "refresh_took", d.h.Stats().LastTook)
}

// controlAccess turns the control settings into the socket's access rules
// and per-user budgets.
func controlAccess(c config.Control) control.Access {
	return control.Access{
		Mode: os.FileMode(c.FileMode), Group: c.Group, MaxConns: c.MaxConnections,
		Readers: unixsock.Allow{UIDs: config.UIDs(c.AllowUIDs), GIDs: config.UIDs(c.AllowGIDs)},
		Admins:  unixsock.Allow{UIDs: config.UIDs(c.AdminUIDs), GIDs: config.UIDs(c.AdminGIDs)},
		Budget: control.Budget{Hotsets: c.MaxHotsetsPerUID, PeerSets: c.MaxHotsetPeerSetsPerUID,
			StatSets: c.MaxStatsetsPerUID, Bytes: int64(c.MaxHotsetBytesPerUID)},
	}
}

// views turns the views setting into the hierarchy's.
func views(v string) spmi.Views {
	switch v {
	case "scalars":
		return spmi.ViewScalars
	case "tables":
		return spmi.ViewTables
	}
	return spmi.ViewBoth
}
