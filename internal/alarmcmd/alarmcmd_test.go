package alarmcmd

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perfagent/subagent/internal/foldlog"
)

// fake is a command that runs until released or killed.
type fake struct {
	done   chan struct{}
	killed atomic.Bool
	once   sync.Once
}

func (f *fake) Wait() error {
	<-f.done
	if f.killed.Load() {
		return syscall.Errno(syscall.EINTR)
	}
	return nil
}
func (f *fake) Kill()          { f.once.Do(func() { f.killed.Store(true); close(f.done) }) }
func (f *fake) Output() string { return "" }

func testRunner(max int, timeout time.Duration, logs *bytes.Buffer) (*Runner, *[]*fake) {
	var started []*fake
	var mu sync.Mutex
	r := &Runner{Max: max, Timeout: timeout, Log: foldlog.New(slog.New(slog.NewTextHandler(logs, nil)), slog.LevelWarn)}
	r.Start = func(argv, env []string, cred *syscall.Credential) (Proc, error) {
		f := &fake{done: make(chan struct{})}
		mu.Lock()
		started = append(started, f)
		mu.Unlock()
		return f, nil
	}
	return r, &started
}

// At most Max commands run at once: the runs beyond are dropped at once
// and counted, and a slot freed takes the next run.
func TestRunnerBoundsConcurrency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs bytes.Buffer
		r, started := testRunner(2, time.Minute, &logs)
		for range 5 {
			r.Run("a", []string{"/bin/true"}, nil) // returns at once: nothing waits in Run
		}
		synctest.Wait()
		if c := r.Counts(); len(*started) != 2 || c.Run != 2 || c.Dropped != 3 {
			t.Fatalf("5 runs with Max 2: started %d, counts %+v; want 2 run and 3 dropped", len(*started), c)
		}
		close((*started)[0].done)
		synctest.Wait()
		r.Run("a", []string{"/bin/true"}, nil)
		synctest.Wait()
		if c := r.Counts(); len(*started) != 3 || c.Dropped != 3 {
			t.Errorf("a run after one ended: started %d, counts %+v", len(*started), c)
		}
		if !strings.Contains(logs.String(), "alarm command dropped") {
			t.Errorf("no log line for the dropped runs: %q", logs.String())
		}
		close((*started)[1].done)
		close((*started)[2].done)
		r.Wait()
	})
}

// A command that runs past Timeout is killed then, not before, and
// counted; one that ends in time is not.
func TestRunnerKillsAtTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs bytes.Buffer
		r, started := testRunner(4, 10*time.Second, &logs)
		r.Run("slow", []string{"/bin/sleep"}, nil)
		r.Run("quick", []string{"/bin/true"}, nil)
		synctest.Wait()
		time.Sleep(5 * time.Second)
		close((*started)[1].done)
		time.Sleep(4*time.Second + 999*time.Millisecond)
		synctest.Wait()
		if (*started)[0].killed.Load() {
			t.Fatal("killed before the timeout")
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		if !(*started)[0].killed.Load() || (*started)[1].killed.Load() {
			t.Fatalf("at the timeout: slow killed %v (want true), quick killed %v (want false)", (*started)[0].killed.Load(), (*started)[1].killed.Load())
		}
		r.Wait()
		if c := r.Counts(); c.Killed != 1 || c.Run != 2 {
			t.Errorf("counts %+v, want 2 run and 1 killed", c)
		}
		if !strings.Contains(logs.String(), "alarm command killed") {
			t.Errorf("no log line for the kill: %q", logs.String())
		}
	})
}

// The output kept is bounded.
func TestBoundedOutput(t *testing.T) {
	b := &bounded{}
	for range 100 {
		b.Write([]byte("0123456789"))
	}
	if n := len(b.String()); n != MaxOutput {
		t.Errorf("kept %d bytes of 1000, want %d", n, MaxOutput)
	}
}

// Stop kills the commands running at once, not at their timeout, and
// later runs start nothing.
func TestRunnerStopKills(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs bytes.Buffer
		r, started := testRunner(4, time.Hour, &logs)
		r.Run("a", []string{"/bin/sleep"}, nil)
		r.Run("b", []string{"/bin/sleep"}, nil)
		synctest.Wait()
		start := time.Now()
		r.Stop()
		if d := time.Since(start); d != 0 || !(*started)[0].killed.Load() || !(*started)[1].killed.Load() {
			t.Fatalf("Stop took %v (fake time), killed %v %v", d, (*started)[0].killed.Load(), (*started)[1].killed.Load())
		}
		r.Run("c", []string{"/bin/true"}, nil)
		synctest.Wait()
		if len(*started) != 2 {
			t.Errorf("a run after Stop started")
		}
	})
}
