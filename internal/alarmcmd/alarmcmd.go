// Package alarmcmd runs the commands of alarms (docs/EXPRESSIONS.md): an
// argv from the configuration file, never a shell string built from
// values; the alarm's values in the environment; as an unprivileged user;
// in its own process group, killed whole at the timeout; at most Max at
// once, a run beyond them dropped and counted; the output bounded and
// logged through a foldlog.Log. Run never blocks the evaluation.
package alarmcmd

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/perfagent/subagent/internal/foldlog"
)

// MaxOutput is the most bytes of a command's output kept for the log.
const MaxOutput = 512

// Proc is a started command.
type Proc interface {
	Wait() error    // until it exits
	Kill()          // its process group
	Output() string // what it wrote, at most MaxOutput bytes
}

// Counts are the runner's totals, served in Agent/expr.
type Counts struct {
	Run, Dropped, Killed, Failed uint64
}

// Runner runs alarms' commands; Set changes its bounds while it runs.
type Runner struct {
	Max     int                 // commands at once
	Timeout time.Duration       // killed past it
	Cred    *syscall.Credential // nil: the daemon's own user
	Log     *foldlog.Log
	// Start starts a command; StartExec unless a test sets its own.
	Start func(argv, env []string, cred *syscall.Credential) (Proc, error)

	mu                           sync.Mutex
	running                      int
	procs                        map[Proc]struct{} // started, not yet ended
	stopped                      bool
	run, dropped, killed, failed atomic.Uint64
	wg                           sync.WaitGroup
}

// Set changes the bounds and the user for the runs that start next.
func (r *Runner) Set(max int, timeout time.Duration, cred *syscall.Credential) {
	r.mu.Lock()
	r.Max, r.Timeout, r.Cred = max, timeout, cred
	r.mu.Unlock()
}

// Counts returns the totals.
func (r *Runner) Counts() Counts {
	return Counts{Run: r.run.Load(), Dropped: r.dropped.Load(), Killed: r.killed.Load(), Failed: r.failed.Load()}
}

// Run starts argv with env unless Max are running (then it is dropped
// and counted); it returns at once.
func (r *Runner) Run(name string, argv, env []string) {
	r.mu.Lock()
	if r.stopped {
		r.mu.Unlock()
		return
	}
	if r.running >= r.Max {
		r.mu.Unlock()
		r.dropped.Add(1)
		r.Log.Note(foldlog.Source{Attrs: []any{"alarm", name}}, "alarm command dropped", fmt.Sprintf("%d commands running", r.Max))
		return
	}
	r.running++
	timeout, cred := r.Timeout, r.Cred
	r.mu.Unlock()
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer func() {
			r.mu.Lock()
			r.running--
			r.mu.Unlock()
		}()
		r.exec(name, argv, env, timeout, cred)
	}()
}

func (r *Runner) exec(name string, argv, env []string, timeout time.Duration, cred *syscall.Credential) {
	src := foldlog.Source{Attrs: []any{"alarm", name, "command", argv[0]}}
	start := r.Start
	if start == nil {
		start = StartExec
	}
	p, err := start(argv, env, cred)
	if err != nil {
		r.failed.Add(1)
		r.Log.Note(src, "alarm command not started", foldlog.Kind(err), "err", err)
		return
	}
	r.run.Add(1)
	r.mu.Lock()
	if r.stopped {
		p.Kill()
	} else {
		if r.procs == nil {
			r.procs = map[Proc]struct{}{}
		}
		r.procs[p] = struct{}{}
	}
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.procs, p)
		r.mu.Unlock()
	}()
	var timedOut atomic.Bool
	t := time.AfterFunc(timeout, func() { timedOut.Store(true); p.Kill() })
	err = p.Wait()
	t.Stop()
	out := foldlog.Text(strings.TrimRight(p.Output(), "\n"))
	switch {
	case timedOut.Load():
		r.killed.Add(1)
		r.Log.Note(src, "alarm command killed", fmt.Sprintf("ran past %v", timeout), "output", out)
	case err != nil:
		r.failed.Add(1)
		r.Log.Note(src, "alarm command failed", err.Error(), "output", out)
	case out != "":
		r.Log.Note(src, "alarm command output", "exited 0", "output", out)
	}
}

// Wait waits for the commands running to end (tests, shutdown).
func (r *Runner) Wait() { r.wg.Wait() }

// Stop kills the commands running and runs no more: a daemon that stops
// leaves no command behind to outlive its timeout.
func (r *Runner) Stop() {
	r.mu.Lock()
	r.stopped = true
	for p := range r.procs {
		p.Kill()
	}
	r.mu.Unlock()
	r.wg.Wait()
}

// StartExec starts argv in a process group of its own as cred (nil: the
// daemon's user), with env only, in /, its output kept up to MaxOutput.
func StartExec(argv, env []string, cred *syscall.Credential) (Proc, error) {
	if len(argv) == 0 {
		return nil, errors.New("empty command")
	}
	c := exec.Command(argv[0], argv[1:]...)
	c.Env, c.Dir = env, "/"
	b := &bounded{}
	c.Stdout, c.Stderr = b, b
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: cred}
	// the process group is killed; a descendant that left it keeps the
	// output pipe open for at most this long after
	c.WaitDelay = time.Second
	if err := c.Start(); err != nil {
		return nil, err
	}
	return &proc{c: c, out: b}, nil
}

type proc struct {
	c   *exec.Cmd
	out *bounded
}

func (p *proc) Wait() error    { return p.c.Wait() }
func (p *proc) Kill()          { _ = syscall.Kill(-p.c.Process.Pid, syscall.SIGKILL) } // again: harmless
func (p *proc) Output() string { return p.out.String() }

// bounded keeps the first MaxOutput bytes written and discards the rest.
type bounded struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *bounded) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := MaxOutput - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (b *bounded) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Env is the environment of an alarm's command: the alarm's values and
// a fixed PATH, nothing of the daemon's.
func Env(name, instance, state, value string, severity int, condition string, at time.Time) []string {
	return []string{
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"ALARM_NAME=" + name,
		"ALARM_INSTANCE=" + instance,
		"ALARM_STATE=" + state,
		"ALARM_VALUE=" + value,
		fmt.Sprintf("ALARM_SEVERITY=%d", severity),
		"ALARM_CONDITION=" + condition,
		"ALARM_TIME=" + at.UTC().Format(time.RFC3339),
	}
}
