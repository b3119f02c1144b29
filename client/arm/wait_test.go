package arm

import (
	"path/filepath"
	"testing"
	"time"
)

// With Wait, Open tries again every Retry while there is no daemon, and
// returns once one answers: here with a refusal, which ends the wait.
func TestOpenWaitsForTheDaemonToAnswer(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "arm.sock")
	waits := make(chan time.Duration, 1)
	fire := make(chan time.Time)
	opened := make(chan *Agent, 1)
	go func() {
		opened <- Open(&Options{Socket: sock, Retry: time.Second, Wait: time.Minute, after: func(d time.Duration) <-chan time.Time {
			waits <- d
			return fire
		}})
	}()
	select {
	case d := <-waits:
		if d != time.Second {
			t.Fatalf("Open waits %v before trying again, want Retry (1s)", d)
		}
	case a := <-opened:
		a.Close()
		t.Fatal("Open returned without a daemon although Wait is a minute")
	case <-time.After(10 * time.Second):
		t.Fatal("Open neither returned nor scheduled a retry")
	}
	r := newRefuserAt(t, sock)
	fire <- time.Time{}
	var a *Agent
	select {
	case a = <-opened:
	case <-time.After(10 * time.Second):
		t.Fatal("Open did not return once the daemon answered")
	}
	defer a.Close()
	if a.Connected() || r.refused.Load() != 1 {
		t.Fatalf("connected %v after %d refusals, want false after 1", a.Connected(), r.refused.Load())
	}
}

// ARM_CONNECT_WAIT and ARM_RETRY are libarm's variables: seconds, for
// the options left at 0. (Disabled: Open fills the options and returns.)
func TestWaitAndRetryFromTheEnvironment(t *testing.T) {
	for _, c := range []struct {
		wait, retry         string
		wantWait, wantRetry time.Duration
	}{
		{"", "", 0, time.Second},
		{"60", "0.05", time.Minute, 50 * time.Millisecond},
		{"1.5", "0", 1500 * time.Millisecond, 10 * time.Millisecond},
		{"99999", "7200", time.Hour, time.Hour},
		{"-1", "1e3", 0, time.Second},
		{"soon", ".5", 0, time.Second},
	} {
		t.Setenv("ARM_CONNECT_WAIT", c.wait)
		t.Setenv("ARM_RETRY", c.retry)
		a := Open(&Options{Disabled: true})
		if a.opts.Wait != c.wantWait || a.opts.Retry != c.wantRetry {
			t.Errorf("ARM_CONNECT_WAIT=%q ARM_RETRY=%q: Wait %v Retry %v, want %v and %v", c.wait, c.retry, a.opts.Wait, a.opts.Retry, c.wantWait, c.wantRetry)
		}
	}
	t.Setenv("ARM_CONNECT_WAIT", "60")
	t.Setenv("ARM_RETRY", "5")
	a := Open(&Options{Disabled: true, Wait: time.Nanosecond, Retry: time.Hour})
	if a.opts.Wait != time.Nanosecond || a.opts.Retry != time.Hour {
		t.Errorf("the environment overrode the options: Wait %v Retry %v", a.opts.Wait, a.opts.Retry)
	}
}
