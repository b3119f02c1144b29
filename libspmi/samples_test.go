//go:build linux

package libspmi

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// startSample runs a sample with SUBAGENT_RUN_DIR=runDir.
func startSample(t *testing.T, bin, runDir string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "SUBAGENT_DDS_SOCKET=", "SUBAGENT_RUN_DIR="+runDir)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

// stopped sends sig and waits for a clean exit.
func stopped(t *testing.T, cmd *exec.Cmd, sig os.Signal) {
	t.Helper()
	cmd.Process.Signal(sig)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s after %v: %v", cmd.Path, sig, err)
		}
	case <-time.After(time.Minute):
		t.Fatalf("%s ignored %v", cmd.Path, sig)
	}
}

// The guide's SpmiSupl1.c, unchanged but for the include line and the
// sixth argument: it registers, its values grow from 22, 42, 28 and 62,
// and its SIGTERM handler (SpmiExit) removes the contexts and the file.
func TestGuideSampleSpmiSupl1(t *testing.T) {
	bothLibs(t, func(t *testing.T, static bool) {
		dir := t.TempDir()
		bin := library(t).Sample(t, "SpmiSupl1", static, dir)
		d := startDaemon(t, "")
		cmd := startSample(t, bin, d.RunDir)
		eventually(t, "SpmiSupl1 registered", func() bool { return d.Node("DDS/IBM/Moretest/SubTest/queue") != nil })
		for path, min := range map[string]uint64{"Test/gadgets": 22, "Test/widgets": 42, "Moretest/SubTest/level": 28, "Moretest/SubTest/queue": 62} {
			eventually(t, path+" set", func() bool {
				n := d.Node("DDS/IBM/" + path)
				return n != nil && n.Current().OK() && n.Current().Uint64() >= min
			})
		}
		if _, err := os.Lstat(filepath.Join(dir, "SpmiSul1SHM")); err != nil {
			t.Fatalf("shared file: %v", err)
		}
		stopped(t, cmd, syscall.SIGTERM)
		if d.Node("DDS/IBM/") != nil {
			t.Fatal("DDS/IBM served after SpmiStopMe")
		}
		if _, err := os.Lstat(filepath.Join(dir, "SpmiSul1SHM")); !os.IsNotExist(err) {
			t.Fatalf("shared file after SpmiExit: %v", err)
		}
	})
}

// The guide's SpmiSupl.c registers its volatile table too and, after its
// first sleep, writes 1, 2, 3 and 4.
func TestGuideSampleSpmiSupl(t *testing.T) {
	dir := t.TempDir()
	bin := library(t).Sample(t, "SpmiSupl", false, dir)
	d := startDaemon(t, "")
	cmd := startSample(t, bin, d.RunDir)
	eventually(t, "SpmiSupl registered", func() bool { return d.Node("DDS/IBM/Test/gadgets") != nil })
	eventually(t, "queue = 4 (the sample sleeps 5 s first)", func() bool {
		n := d.Node("DDS/IBM/Moretest/SubTest/queue")
		return n != nil && n.Current().Uint64() == 4
	})
	d.want(t, "DDS/IBM/Test/gadgets", "99.2.220.1", 1)
	d.want(t, "DDS/IBM/Test/widgets", "99.2.220.2", 2)
	d.want(t, "DDS/IBM/Moretest/SubTest/level", "99.2.221.222.1", 3)
	d.want(t, "DDS/IBM/Moretest/SubTest/queue", "99.2.221.222.2", 4)
	stopped(t, cmd, syscall.SIGINT)
	if d.Node("DDS/IBM/") != nil {
		t.Fatal("DDS/IBM served after SpmiStopMe")
	}
}

// SpmiVolatile adds DDS/IBM/Moretest/Bingo on SIGUSR1 and deletes it on
// SIGUSR2, while running; it survives a daemon restart (SpmiDdsCheck).
func TestVolatileSample(t *testing.T) {
	bothLibs(t, func(t *testing.T, static bool) {
		bin := library(t).Sample(t, "SpmiVolatile", static, "")
		run := t.TempDir()
		d := startDaemon(t, run)
		cmd := startSample(t, bin, run, filepath.Join(t.TempDir(), "hook"))
		// The sample writes its values after SpmiDdsInit returns.
		eventually(t, "registered and written", func() bool {
			n := d.Node("DDS/IBM/Test/widgets")
			return n != nil && n.Current().Uint64() == 42
		})
		d.want(t, "DDS/IBM/Test/widgets", "99.2.220.2", 42)
		for i := 0; i < 2; i++ {
			cmd.Process.Signal(syscall.SIGUSR1)
			eventually(t, "Bingo added", func() bool {
				n := d.Node("DDS/IBM/Moretest/Bingo/solutions")
				return n != nil && n.Current().Uint64() == 6
			})
			d.want(t, "DDS/IBM/Moretest/Bingo/solutions", "99.2.221.1.2", 6)
			cmd.Process.Signal(syscall.SIGUSR2)
			eventually(t, "Bingo deleted", func() bool { return d.Node("DDS/IBM/Moretest/Bingo/") == nil })
		}
		cmd.Process.Signal(syscall.SIGUSR1)
		eventually(t, "Bingo added again", func() bool { return d.Node("DDS/IBM/Moretest/Bingo/") != nil })

		d.Close()
		d2 := startDaemon(t, run)
		eventually(t, "registered with the new daemon", func() bool {
			n := d2.Node("DDS/IBM/Moretest/Bingo/solutions")
			return n != nil && n.Current().Uint64() == 6
		})
		d2.want(t, "DDS/IBM/Moretest/SubTest/queue", "99.2.221.222.2", 62)
		stopped(t, cmd, syscall.SIGTERM)
		if d2.Node("DDS/IBM/") != nil {
			t.Fatal("DDS/IBM served after exit")
		}
	})
}
