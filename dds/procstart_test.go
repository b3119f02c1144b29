package dds

import (
	"os"
	"os/exec"
	"testing"
)

// ProcStart tells processes apart: this one has a start time, a later
// child a later one, and a pid that does not exist none.
func TestProcStart(t *testing.T) {
	self := ProcStart(int32(os.Getpid()))
	if self == 0 {
		t.Fatal("no start time for this process")
	}
	cmd := exec.Command("sleep", "5")
	if err := cmd.Start(); err != nil {
		t.Skipf("no sleep(1): %v", err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if child := ProcStart(int32(cmd.Process.Pid)); child < self {
		t.Fatalf("child started at %d, before this process (%d)", child, self)
	}
	if got := ProcStart(1 << 30); got != 0 {
		t.Fatalf("a pid that cannot exist has start time %d", got)
	}
}
