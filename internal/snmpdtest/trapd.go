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

// StartTrapd starts snmptrapd in its own temporary directory, waits
// (bounded) until it logs that it runs, and stops it when the test ends.
// It does not register as an AgentX subagent (-X).
func StartTrapd(t testing.TB) *Trapd {
	t.Helper()
	tools := FindTools(t)
	dir := shortTempDir(t)
	d := &Trapd{t: t, dir: dir, LogPath: filepath.Join(dir, "snmptrapd.log")}
	conf := filepath.Join(dir, "etc", "snmptrapd.conf")
	state := filepath.Join(dir, "var")
	if err := mkdirs(filepath.Dir(conf), state); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, []byte("disableAuthorization yes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Stop)
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		port, err := freeUDPPort()
		if err != nil {
			t.Fatal(err)
		}
		d.Addr = fmt.Sprintf("127.0.0.1:%d", port)
		args := []string{"-f", "-C", "-c", conf, "-Lf", d.LogPath, "-p", filepath.Join(dir, "snmptrapd.pid"),
			"-X", "-On", "-n", "udp:" + d.Addr}
		p, err := startProc("snmptrapd", tools.Snmptrapd, args, state, filepath.Join(dir, "snmptrapd.out"))
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

// WaitFor polls the log until it contains substr or timeout passes, and
// returns the log.
func (d *Trapd) WaitFor(substr string, timeout time.Duration) (string, error) {
	deadline := time.Now().Add(timeout)
	for {
		log := d.Log()
		if strings.Contains(log, substr) {
			return log, nil
		}
		if time.Now().After(deadline) {
			return log, fmt.Errorf("snmptrapd logged no %q within %v", substr, timeout)
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
