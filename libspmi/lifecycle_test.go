//go:build linux

package libspmi

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	client "github.com/perfagent/subagent/client/ddsclient"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/dds"
	"github.com/perfagent/subagent/dds/ddstest"
)

// A SIGKILLed supplier is removed at once (socket EOF); started again on
// the same file it registers with the same OIDs, no clean-up needed.
func TestKilledSupplierRestarts(t *testing.T) {
	bothLibs(t, func(t *testing.T, static bool) {
		d := startDaemon(t, "")
		s := startSup(t, static, d.RunDir)
		s.ok("init %s 4096 guide", s.file)
		s.ok("put 0 5")
		off := s.offset("add 0 1 DDS/IBM/Moretest/Bingo dyn")
		d.want(t, "DDS/IBM/Test/gadgets", "99.2.220.1", 5)

		s.cmd.Process.Signal(syscall.SIGKILL)
		s.cmd.Wait()
		eventually(t, "killed supplier's contexts removed", func() bool { return d.Node("DDS/IBM/") == nil })
		if _, err := os.Lstat(s.file); err != nil {
			t.Fatalf("a killed supplier cannot remove its file: %v", err)
		}

		r := startSup(t, static, d.RunDir)
		r.file = s.file
		r.ok("init %s 4096 guide", r.file)
		r.ok("put 0 6")
		d.want(t, "DDS/IBM/Test/gadgets", "99.2.220.1", 6)
		d.want(t, "DDS/IBM/Moretest/SubTest/queue", "99.2.221.222.2", 0)
		if got := r.offset("add 0 1 DDS/IBM/Moretest/Bingo dyn"); got != off {
			t.Fatalf("slot %d after restart, was %d", got, off)
		}
		d.want(t, "DDS/IBM/Moretest/Bingo/solutions", "99.2.221.1.2", 0)
	})
}

// After a daemon restart, SpmiDdsCheck (or the next SpmiDdsAddCx or
// SpmiDdsDelCx) registers again: permanent values stay where they were
// and live volatile contexts come back at their slots with their values,
// also when a deleted context left a hole before them. Only a daemon that
// refuses a replayed context makes the library give up.
func TestDaemonRestartReplays(t *testing.T) {
	bothLibs(t, func(t *testing.T, static bool) {
		run := t.TempDir()
		d := startDaemon(t, run)
		s := startSup(t, static, run)
		s.ok("init %s 4096 guide", s.file)
		s.ok("put 8 42")
		a := s.offset("add 0 1 DDS/IBM/Moretest/A dyn")
		b := s.offset("add 0 2 DDS/IBM/Moretest/B dyn")
		s.ok("put %d 11", b+8)
		s.ok("check") // nothing to do

		d.Close()
		s.fails(siInitFailed, []string{"dds.sock"}, "check") // no daemon yet: retried later
		d2 := startDaemon(t, run)
		s.ok("check")
		d2.want(t, "DDS/IBM/Test/widgets", "99.2.220.2", 42)
		d2.want(t, "DDS/IBM/Moretest/B/solutions", "99.2.221.2.2", 11)
		d2.want(t, "DDS/IBM/Moretest/A/solutions", "99.2.221.1.2", 0)

		// The pointers still work: the slots are where they were.
		s.ok("put %d 12", b+8)
		d2.want(t, "DDS/IBM/Moretest/B/solutions", "99.2.221.2.2", 12)
		s.ok("del %d", a)
		if d2.Node("DDS/IBM/Moretest/A/") != nil {
			t.Fatal("A still served")
		}

		// Now A's slot is a hole before B's. First fit alone would pack B
		// into it on the next daemon; the replay asks for B's own slot.
		d2.Close()
		d3 := startDaemon(t, run)
		s.ok("check")
		d3.want(t, "DDS/IBM/Moretest/B/solutions", "99.2.221.2.2", 12)
		s.ok("put %d 13", b+8) // through the same pointer
		d3.want(t, "DDS/IBM/Moretest/B/solutions", "99.2.221.2.2", 13)
		if c := s.offset("add 0 3 DDS/IBM/Moretest/C dyn"); c != a { // the hole is free
			t.Fatalf("C at %d, the hole at %d", c, a)
		}
		s.ok("del %d", b) // the daemon knows B at its old offset
		d3.want(t, "DDS/IBM/Moretest/C/solutions", "99.2.221.3.2", 0)
		if d3.Node("DDS/IBM/Moretest/B/") != nil {
			t.Fatal("B still served")
		}
		b = s.offset("add 0 2 DDS/IBM/Moretest/B dyn")

		// A daemon that refuses a replayed context (here: fewer contexts
		// allowed than the supplier has) cannot keep the pointers valid,
		// so the library gives up rather than serve stale values.
		d3.Close()
		startDaemonLimits(t, run, ddswire.Limits{MaxContexts: 4})
		s.fails(siAssumedDead, []string{"DDS/IBM/Moretest/B", fmt.Sprintf("slot at %d", b), "refused", "SpmiExit"}, "check")
		if f := s.ok("goaway"); f[0] != "1" {
			t.Fatalf("SiShGoAway %v after giving up", f)
		}
		s.ok("exit")
	})
}

// The library finds the socket as the Go library and the daemon do
// (client/rundir): SUBAGENT_RUN_DIR (the other tests), else this user's
// default run directory, then the system daemon's. Root's default is
// /run/subagent whatever XDG_RUNTIME_DIR says; another user's is
// $XDG_RUNTIME_DIR/subagent.
func TestDefaultSocketSearch(t *testing.T) {
	testutil.RequireRoot(t)
	xdg := t.TempDir()
	testutil.Traversable(t, xdg)
	run := filepath.Join(xdg, "subagent")
	if err := os.Mkdir(run, 0o755); err != nil {
		t.Fatal(err)
	}
	d := &daemon{ddstest.StartConfig(t, run, dds.ServerConfig{Mode: 0o666, AllowUIDs: []uint32{testutil.Nobody}})}
	t.Setenv("SUBAGENT_DDS_SOCKET", "")
	t.Setenv("SUBAGENT_RUN_DIR", "")
	t.Setenv("XDG_RUNTIME_DIR", xdg)

	// Root: the system daemon's directory, not the one in XDG_RUNTIME_DIR.
	if got := client.SocketPath(); got != "/run/subagent/dds.sock" {
		t.Errorf("Go library's socket for root: %s", got)
	}
	// Its library finds no daemon there even when one serves this machine
	// (`make run`): /run is an empty tmpfs in a mount namespace of its own.
	hidden := exec.Command("unshare", "--mount", "--propagation", "private",
		"sh", "-c", `mount -t tmpfs tmpfs /run && exec "$0"`, program(t, "driver", false))
	r := &sup{lineProc: startLineCmd(t, hidden, "SUBAGENT_DDS_SOCKET=", "SUBAGENT_RUN_DIR=", "XDG_RUNTIME_DIR="+xdg),
		file: filepath.Join(t.TempDir(), "SpmiSupl_hook")}
	r.fails(siInitFailed, []string{"/run/subagent/dds.sock"}, "init %s 4096 guide", r.file)

	// Another user: its own default, $XDG_RUNTIME_DIR/subagent.
	bin := program(t, "driver", false)
	testutil.Traversable(t, filepath.Dir(bin))
	files := t.TempDir()
	testutil.Traversable(t, files)
	if err := os.Chown(files, testutil.Nobody, testutil.Nobody); err != nil {
		t.Fatal(err)
	}
	n := &sup{lineProc: startLineCmd(t, testutil.AsNobody(t, bin), "SUBAGENT_DDS_SOCKET=", "SUBAGENT_RUN_DIR=", "XDG_RUNTIME_DIR="+xdg),
		file: filepath.Join(files, "SpmiSupl_hook")}
	n.ok("init %s 4096 guide", n.file)
	d.want(t, "DDS/IBM/Test/gadgets", "99.2.220.1", 0)
	n.ok("exit")
}

// When SiShGoAway is set (by the daemon after a stamp timeout or a fault,
// or, as the guide allows, by any consumer: here the test), the library
// refuses with SiAssumedDead, drops the registration instead of renewing
// it, and SpmiExit still cleans up.
func TestGoAwayMeansAssumedDead(t *testing.T) {
	d := startDaemon(t, "")
	s := startSup(t, false, d.RunDir)
	s.ok("init %s 4096 guide", s.file)
	f, err := os.OpenFile(s.file, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mem, err := unix.Mmap(int(f.Fd()), 0, ddswire.HeaderSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(mem)
	if err := ddswire.SetGoAway(mem); err != nil {
		t.Fatal(err)
	}
	if f := s.ok("goaway"); f[0] != "1" {
		t.Fatalf("SiShGoAway %v", f)
	}
	s.fails(siAssumedDead, []string{"SiShGoAway", "SpmiExit"}, "add 0 1 DDS/IBM/Moretest/Bingo x")
	eventually(t, "registration dropped", func() bool { return d.Node("DDS/IBM/") == nil })
	s.fails(siAssumedDead, nil, "check")
	s.ok("exit")
	if _, err := os.Lstat(s.file); !os.IsNotExist(err) {
		t.Fatalf("file after SpmiExit: %v", err)
	}
}

// The guide's samples call SpmiExit from a signal handler, which may
// interrupt a call of the library in progress: here an SpmiDdsAddCx whose
// reply never comes. SpmiExit must not deadlock: it drops the connection
// (so the daemon unregisters) and removes the file at once.
func TestSpmiExitFromSignalHandlerDuringCall(t *testing.T) {
	run := t.TempDir()
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(run, "dds.sock"), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	eof := make(chan bool, 1)
	gotAdd := make(chan struct{})
	go func() { // a daemon that accepts Init and then never answers
		c, err := ln.AcceptUnix()
		if err != nil {
			return
		}
		defer c.Close()
		_, fds, err := ddswire.RecvMessage(c, ddswire.Limits{}, time.Minute)
		for _, fd := range fds {
			unix.Close(fd)
		}
		if err != nil || ddswire.WriteMessage(c, ddswire.NewReply(ddswire.MsgInit, 1, nil), ddswire.Limits{}) != nil {
			return
		}
		if _, _, err := ddswire.RecvMessage(c, ddswire.Limits{}, time.Minute); err != nil { // the AddCx
			return
		}
		close(gotAdd)
		c.SetReadDeadline(time.Now().Add(time.Minute))
		_, err = c.Read(make([]byte, 1))
		eof <- err == io.EOF
	}()
	s := startSup(t, false, run)
	s.ok("init %s 4096 guide", s.file)
	s.ok("trap")
	fmt.Fprintln(s.in, "add 0 1 DDS/IBM/Moretest/Bingo blocked")
	select { // sent: it waits for the reply (or is about to)
	case <-gotAdd:
	case <-time.After(time.Minute):
		t.Fatal("the daemon did not receive the AddCx")
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("driver: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("SpmiExit in the signal handler did not return")
	}
	if !<-eof {
		t.Fatal("the daemon did not see the connection close")
	}
	if _, err := os.Lstat(s.file); !os.IsNotExist(err) {
		t.Fatalf("file after SpmiExit: %v", err)
	}
}
