package snmpdtest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Trapd is a running snmptrapd that accepts every notification on a
// 127.0.0.1 UDP port and logs it, with numeric OIDs, to LogPath.
type Trapd struct {
	Addr    string // "127.0.0.1:port", for Options.TrapSink
	LogPath string

	t    testing.TB
	dir  string
	once sync.Once
	p    *proc
}

// TrapdOptions configure StartTrapdWith.
type TrapdOptions struct {
	Config  []string // lines appended to snmptrapd.conf (SNMPv3 users...)
	MIBDirs []string // with Modules: directories of MIB modules
	Modules []string // modules to load so that it prints names; none: numeric OIDs (-On)
	Addr    string   // 127.0.0.1:port to listen on (see FreeUDPAddr); empty: a free one
	Args    []string // more arguments (-Dusm: log why SNMPv3 messages are refused)
}

// StartTrapd starts snmptrapd with the default options.
func StartTrapd(t testing.TB) *Trapd { return StartTrapdWith(t, TrapdOptions{}) }

// StartTrapdWith starts snmptrapd in its own temporary directory, waits
// (bounded) until it logs that it runs, and stops it by PID when the test
// ends. It does not register as an AgentX subagent (-X).
func StartTrapdWith(t testing.TB, opts TrapdOptions) *Trapd {
	t.Helper()
	tools := FindTools(t)
	dir := shortTempDir(t)
	d := &Trapd{t: t, dir: dir, LogPath: filepath.Join(dir, "snmptrapd.log")}
	conf := filepath.Join(dir, "etc", "snmptrapd.conf")
	state := filepath.Join(dir, "var")
	if err := mkdirs(filepath.Dir(conf), state); err != nil {
		t.Fatal(err)
	}
	lines := append([]string{"disableAuthorization yes"}, opts.Config...)
	if err := os.WriteFile(conf, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Stop)
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		d.Addr = opts.Addr
		if d.Addr == "" {
			d.Addr = FreeUDPAddr(t)
		}
		args := []string{"-f", "-C", "-c", conf, "-Lf", d.LogPath, "-p", filepath.Join(dir, "snmptrapd.pid"), "-X", "-n"}
		if len(opts.Modules) == 0 {
			args = append(args, "-On")
		} else {
			args = append(args, "-M", strings.Join(opts.MIBDirs, ":"), "-m", strings.Join(opts.Modules, ":"))
		}
		args = append(args, opts.Args...)
		p, err := startProc("snmptrapd", tools.Snmptrapd, append(args, "udp:"+d.Addr), state, filepath.Join(dir, "snmptrapd.out"))
		if err != nil {
			t.Fatal(err)
		}
		d.p = p
		if lastErr = d.waitStarted(); lastErr == nil {
			return d
		}
		p.stop()
	}
	t.Fatalf("snmptrapd did not start: %v\n%s", lastErr, readFile(filepath.Join(dir, "snmptrapd.out")))
	return nil
}

// FreeUDPAddr is a 127.0.0.1 UDP address that was free a moment ago.
func FreeUDPAddr(t testing.TB) string {
	t.Helper()
	port, err := freeUDPPort()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("127.0.0.1:%d", port)
}

func (d *Trapd) waitStarted() error {
	deadline := time.Now().Add(startTimeout)
	for time.Now().Before(deadline) {
		if !d.p.alive() {
			return fmt.Errorf("snmptrapd exited at start (%v)", d.p.err)
		}
		if strings.Contains(d.Log(), "NET-SNMP version") {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("snmptrapd did not log its start within %v", startTimeout)
}

// Log returns what snmptrapd logged so far.
func (d *Trapd) Log() string { return readFile(d.LogPath) }

// WaitFor polls the log until it holds every one of subs or timeout
// passes, and returns the log.
func (d *Trapd) WaitFor(timeout time.Duration, subs ...string) (string, error) {
	deadline := time.Now().Add(timeout)
	for {
		log, missing := d.Log(), ""
		for _, s := range subs {
			if !strings.Contains(log, s) {
				missing = s
				break
			}
		}
		if missing == "" {
			return log, nil
		}
		if time.Now().After(deadline) {
			return log, fmt.Errorf("snmptrapd logged no %q within %v", missing, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop stops snmptrapd by PID (SIGTERM, then SIGKILL after a bound).
func (d *Trapd) Stop() {
	d.once.Do(func() {
		if d.p == nil {
			return
		}
		if err := d.p.stop(); err != nil {
			d.t.Errorf("stopping snmptrapd: %v", err)
		}
	})
}

// VarBinds returns the VarBinds of each notification logged that has one
// whose text contains sub, in the order they came, each as snmptrapd
// prints it ("SUBAGENT-MIB::hotsetName.0 = STRING: \"x\""). snmptrapd
// logs a notification's VarBinds on one line, separated by tabs (a
// value holding a tab would be split).
func (d *Trapd) VarBinds(sub string) [][]string {
	var out [][]string
	for _, line := range strings.Split(d.Log(), "\n") {
		if !strings.Contains(line, sub) {
			continue
		}
		var vbs []string
		for _, f := range strings.Split(line, "\t") {
			if f = strings.TrimSpace(f); strings.Contains(f, " = ") {
				vbs = append(vbs, f)
			}
		}
		out = append(out, vbs)
	}
	return out
}
