package ddswire_test

import (
	"os"
	"os/exec"
	"testing"

	"github.com/perfagent/subagent/client/ddswire"
)

// ProcStart tells processes apart: this one has a start time, a later
// child a later one, and a pid that does not exist none.
func TestProcStart(t *testing.T) {
	self := ddswire.ProcStart(int32(os.Getpid()))
	if self == 0 {
		t.Fatal("no start time for this process")
	}
	cmd := exec.Command("sleep", "5")
	if err := cmd.Start(); err != nil {
		t.Skipf("no sleep(1): %v", err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if child := ddswire.ProcStart(int32(cmd.Process.Pid)); child < self {
		t.Fatalf("child started at %d, before this process (%d)", child, self)
	}
	if got := ddswire.ProcStart(1 << 30); got != 0 {
		t.Fatalf("a pid that cannot exist has start time %d", got)
	}
}

// Field 22 is counted from the last ')': a command name may hold spaces
// and parentheses. A short or garbled line gives 0.
func TestStatStart(t *testing.T) {
	for line, want := range map[string]uint64{
		"42 (sleep) S 1 42 42 0 -1 4194304 90 0 0 0 0 0 0 0 20 0 1 0 98765 2252800 128 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n": 98765,
		"7 (a b) (c)) R 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 123 0 0\n":                                                                              123,
		"7 (x) R 1 2 3\n":         0,
		"no parenthesis at all\n": 0,
		"7 (x) R 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 notanumber 0\n": 0,
	} {
		if got := ddswire.StatStart([]byte(line)); got != want {
			t.Errorf("%q: %d, want %d", line, got, want)
		}
	}
}
