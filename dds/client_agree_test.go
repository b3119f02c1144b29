package dds

import (
	"os"
	"testing"

	"github.com/prometheus/procfs"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/ddswire/ddswiretest"
)

// The client module's hand-written reading of a process's start time
// agrees with procfs's, and its header accessors with the daemon's.
func TestDaemonAgreesWithClientModule(t *testing.T) {
	for _, pid := range []int32{int32(os.Getpid()), 1, 1 << 30} {
		var want uint64
		if p, err := procfs.NewProc(int(pid)); err == nil {
			if st, err := p.Stat(); err == nil {
				want = st.Starttime
			}
		}
		if got := ddswire.ProcStart(pid); got != want {
			t.Errorf("pid %d: start %d, procfs reads %d", pid, got, want)
		}
	}
	mem := ddswiretest.GoodFile()
	if err := ddswire.SetGoAway(mem); err != nil {
		t.Fatal(err)
	}
	if g, err := ddswire.LoadGoAway(mem); !g || err != nil {
		t.Errorf("SiShGoAway set by the client module reads %v, %v", g, err)
	}
	if err := ddswire.StoreGen(mem, 0x1234); err != nil {
		t.Fatal(err)
	}
	if g, err := ddswire.LoadGen(mem); g != 0x1234 || err != nil {
		t.Errorf("generation %#x, %v", g, err)
	}
}
