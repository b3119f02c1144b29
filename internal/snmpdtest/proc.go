package snmpdtest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// stopGrace is how long a daemon gets to exit after SIGTERM before SIGKILL.
const stopGrace = 5 * time.Second

// proc is one daemon started in the foreground (-f), so its PID is ours.
type proc struct {
	name   string
	cmd    *exec.Cmd
	exited chan struct{}
	err    error // Wait's result, set before exited is closed
}

// env keeps the net-snmp programs away from system state: no MIB loading
// (numeric OIDs only), no /etc/snmp/snmp.conf, persistent files in dir.
func env(dir string) []string {
	return append(os.Environ(), "MIBS=", "MIBDIRS=", "SNMPCONFPATH="+dir, "SNMP_PERSISTENT_DIR="+dir)
}

func startProc(name, path string, args []string, stateDir, outPath string) (*proc, error) {
	out, err := os.OpenFile(outPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	cmd := exec.Command(path, args...)
	cmd.Env = env(stateDir)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

func (p *proc) alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// stop sends SIGTERM to the PID, then SIGKILL after stopGrace; both waits
// are bounded.
func (p *proc) stop() error {
	if !p.alive() {
		return nil
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("SIGTERM to %s (pid %d): %w", p.name, p.cmd.Process.Pid, err)
	}
	select {
	case <-p.exited:
		return nil
	case <-time.After(stopGrace):
	}
	p.cmd.Process.Kill()
	select {
	case <-p.exited:
		return fmt.Errorf("%s (pid %d) ignored SIGTERM for %v and was killed", p.name, p.cmd.Process.Pid, stopGrace)
	case <-time.After(stopGrace):
		return fmt.Errorf("%s (pid %d) survived SIGKILL for %v", p.name, p.cmd.Process.Pid, stopGrace)
	}
}

// freeUDPPort returns a port on 127.0.0.1 that was free a moment ago; the
// callers retry when a daemon loses the race for it.
func freeUDPPort() (int, error) {
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port, nil
}

// freeTCPPort is freeUDPPort for TCP.
func freeTCPPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// shortTempDir is t.TempDir() unless its path is too long for a Unix
// socket (108 bytes with the file name), then a shorter one under $TMPDIR.
func shortTempDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if len(dir) <= 80 {
		return dir
	}
	dir, err := os.MkdirTemp("", "snmpd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

func mkdirs(dirs ...string) error {
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	return nil
}
