package snmpdtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// startTimeout bounds how long a daemon may take to answer after start.
const startTimeout = 10 * time.Second

// Options configure Start.
type Options struct {
	// Community is the read-only community, valid from 127.0.0.1 only.
	// Default "public".
	Community string
	// RWCommunity, when set, is a read-write community from 127.0.0.1
	// only, which Set uses; without it the master refuses every Set
	// itself (noAccess) and never asks a subagent.
	RWCommunity string
	// TrapSink, a "127.0.0.1:port" address, receives the master's
	// notifications (SNMPv2c trap2sink), e.g. a Trapd's Addr.
	TrapSink string
	// V1TrapSink, a "127.0.0.1:port" address, receives the master's
	// notifications translated to SNMPv1 traps (trapsink, RFC 3584).
	V1TrapSink string
	// AgentXTCP also opens an AgentX TCP socket on a free 127.0.0.1 port
	// (AgentXTCPAddress).
	AgentXTCP bool
	// ExtraConfig lines are appended to snmpd.conf.
	ExtraConfig []string
}

// Snmpd is a running net-snmp master agent with AgentX enabled.
type Snmpd struct {
	Tools         Tools
	Dir           string // everything of this instance lives here
	ConfPath      string
	LogPath       string
	AgentXPath    string // the AgentX Unix socket
	AgentXAddress string // "unix:" + AgentXPath, for agentx.Config.Address
	// AgentXTCPAddress is "tcp:127.0.0.1:port" when Options.AgentXTCP.
	AgentXTCPAddress string
	Addr             string // "127.0.0.1:port", the UDP agent address
	Community        string

	t       testing.TB
	opts    Options
	mu      sync.Mutex
	p       *proc
	stopped bool
}

// Start writes a snmpd.conf into a temporary directory, starts snmpd on it
// and waits (bounded) until it answers SNMP. It is stopped when the test
// ends. A missing snmpd fails the test (see FindTools).
func Start(t testing.TB, opts Options) *Snmpd {
	t.Helper()
	if opts.Community == "" {
		opts.Community = "public"
	}
	dir := shortTempDir(t)
	s := &Snmpd{Tools: FindTools(t), Dir: dir, ConfPath: filepath.Join(dir, "etc", "snmpd.conf"),
		LogPath: filepath.Join(dir, "snmpd.log"), AgentXPath: filepath.Join(dir, "master"),
		Community: opts.Community, t: t, opts: opts}
	s.AgentXAddress = "unix:" + s.AgentXPath
	if err := mkdirs(filepath.Dir(s.ConfPath), s.stateDir()); err != nil {
		t.Fatal(err)
	}
	// The tools read snmp.conf from SNMPCONFPATH (the state directory):
	// bind their sockets to loopback too.
	if err := os.WriteFile(filepath.Join(s.stateDir(), "snmp.conf"), []byte("clientaddr 127.0.0.1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		port, perr := freeUDPPort()
		if perr != nil {
			t.Fatal(perr)
		}
		s.Addr = fmt.Sprintf("127.0.0.1:%d", port)
		if opts.AgentXTCP {
			tcp, terr := freeTCPPort()
			if terr != nil {
				t.Fatal(terr)
			}
			s.AgentXTCPAddress = fmt.Sprintf("tcp:127.0.0.1:%d", tcp)
		}
		if err = s.writeConfig(); err != nil {
			t.Fatal(err)
		}
		if err = s.start(); err == nil {
			return s
		}
	}
	t.Fatalf("snmpd did not start: %v\n--- %s:\n%s", err, s.LogPath, readFile(s.LogPath))
	return nil
}

// stateDir holds net-snmp's persistent files. It must not be the directory
// of ConfPath: snmpd writes its own "snmpd.conf" there.
func (s *Snmpd) stateDir() string { return filepath.Join(s.Dir, "var") }

func (s *Snmpd) writeConfig() error {
	lines := []string{
		"# written by internal/snmpdtest for one test run",
		"master agentx",
		"agentXSocket " + strings.TrimSuffix("unix:"+s.AgentXPath+","+s.AgentXTCPAddress, ","),
		"agentXPerms 0700 0700",
		"rocommunity " + s.Community + " 127.0.0.1",
	}
	if s.opts.RWCommunity != "" {
		lines = append(lines, "rwcommunity "+s.opts.RWCommunity+" 127.0.0.1")
	}
	lines = append(lines,
		"agentaddress udp:"+s.Addr,
		"[snmp] persistentDir "+s.stateDir(),
		"[snmp] clientaddr 127.0.0.1", // the trap sender's socket, else on 0.0.0.0
	)
	if s.opts.TrapSink != "" {
		lines = append(lines, "trap2sink "+s.opts.TrapSink+" "+s.Community)
	}
	if s.opts.V1TrapSink != "" {
		lines = append(lines, "trapsink "+s.opts.V1TrapSink+" "+s.Community)
	}
	lines = append(lines, s.opts.ExtraConfig...)
	return os.WriteFile(s.ConfPath, []byte(strings.Join(lines, "\n")+"\n"), 0o600)
}

// start runs snmpd and waits until it answers on UDP and its AgentX
// socket exists.
func (s *Snmpd) start() error {
	// -I -smux: the SMUX module would listen on 0.0.0.0:199.
	args := []string{"-f", "-A", "-Lf", s.LogPath, "-C", "-c", s.ConfPath, "-p", filepath.Join(s.Dir, "snmpd.pid"), "-I", "-smux"}
	p, err := startProc("snmpd", s.Tools.Snmpd, args, s.stateDir(), filepath.Join(s.Dir, "snmpd.out"))
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.p, s.stopped = p, false
	s.mu.Unlock()
	deadline := time.Now().Add(startTimeout)
	for time.Now().Before(deadline) {
		if !p.alive() {
			return fmt.Errorf("snmpd exited at start (%v): %s", p.err, readFile(filepath.Join(s.Dir, "snmpd.out")))
		}
		if _, err := os.Stat(s.AgentXPath); err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			_, _, err := s.Cmd(ctx, s.Tools.Snmpget, []string{"-t", "0.3", "-r", "0"}, "1.3.6.1.2.1.1.3.0")
			cancel()
			if err == nil {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	p.stop()
	return fmt.Errorf("snmpd did not answer on %s within %v", s.Addr, startTimeout)
}

// Stop stops snmpd by PID: SIGTERM, then SIGKILL after a bound. Stopping a
// stopped snmpd does nothing.
func (s *Snmpd) Stop() {
	s.mu.Lock()
	p, stopped := s.p, s.stopped
	s.stopped = true
	s.mu.Unlock()
	if p == nil || stopped {
		return
	}
	if err := p.stop(); err != nil {
		s.t.Errorf("stopping snmpd: %v", err)
	}
}

// Restart stops snmpd and starts it again on the same socket, port and
// configuration, as an administrator's restart does.
func (s *Snmpd) Restart() {
	s.t.Helper()
	s.Stop()
	if err := s.start(); err != nil {
		s.t.Fatalf("restarting snmpd: %v\n--- %s:\n%s", err, s.LogPath, readFile(s.LogPath))
	}
}

// Running reports whether the snmpd process is alive.
func (s *Snmpd) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.p != nil && !s.stopped && s.p.alive()
}

// Log returns snmpd's log so far.
func (s *Snmpd) Log() string { return readFile(s.LogPath) }
