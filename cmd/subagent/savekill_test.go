package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/perfagent/subagent/client/arm"
	"github.com/perfagent/subagent/client/trustdir"
	"github.com/perfagent/subagent/daemon"
	"github.com/perfagent/subagent/notiflog"
)

// saveWatch reports the temporary files of saves in the state directory
// as they are created and closed (inotify): the moments to kill at.
type saveWatch struct{ fd int }

func watchSaves(t *testing.T, dir string) *saveWatch {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_CREATE|unix.IN_CLOSE_WRITE); err != nil {
		t.Fatal(err)
	}
	return &saveWatch{fd}
}

// drop forgets the events queued so far (those of a daemon before the kill).
func (w *saveWatch) drop() {
	var buf [4096]byte
	for {
		if n, _ := unix.Read(w.fd, buf[:]); n <= 0 {
			return
		}
	}
}

// next waits up to d for mask on the temporary file of one of bases and
// returns that base; "" when none came.
func (w *saveWatch) next(bases []string, mask uint32, d time.Duration) string {
	var buf [4096]byte
	end := time.Now().Add(d)
	for left := time.Until(end); left > 0; left = time.Until(end) {
		fds := []unix.PollFd{{Fd: int32(w.fd), Events: unix.POLLIN}}
		if n, _ := unix.Poll(fds, int(left.Milliseconds())+1); n <= 0 {
			continue
		}
		n, _ := unix.Read(w.fd, buf[:])
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := string(bytes.TrimRight(buf[off+unix.SizeofInotifyEvent:off+unix.SizeofInotifyEvent+int(ev.Len)], "\x00"))
			off += unix.SizeofInotifyEvent + int(ev.Len)
			for _, b := range bases {
				if ev.Mask&mask != 0 && trustdir.IsTemp(name, b) {
					return b
				}
			}
		}
	}
	return ""
}

// armNames registers a new ARM application every 20 ms, each numbered in
// numbering.json, from agents of 50 applications each, whether the
// daemon is up or not, until stop.
func armNames(e *env, stop <-chan struct{}) {
	var ag *arm.Agent
	defer func() { ag.Close() }()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		if i%50 == 0 {
			if ag != nil {
				ag.Close()
			}
			ag = arm.Open(&arm.Options{Socket: filepath.Join(e.runDir, "arm.sock"), Retry: 10 * time.Millisecond})
		}
		ag.App(fmt.Sprintf("Churn%d", i), "")
	}
}

// temps lists the temporary files of saves in dir.
func temps(t *testing.T, dir string) []string {
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, de := range des {
		if trustdir.IsTemp(de.Name(), "") {
			out = append(out, de.Name())
		}
	}
	return out
}

// The issue's target "kill -9 during saves 30 times: no temporary file
// left after the next start". New ARM applications keep coming
// (armNames), each numbered in numbering.json, and new DDS peer sets
// (peerSets, 200 a second), each raising a notification into the
// notification log, whose journal is rewritten each time it has grown by
// 64 KiB (every second or two). Each round
// kills the daemon (SIGKILL) at a moment picked by an event, not a sleep:
// the creation, or in turn the close, of a save's temporary file
// (inotify). After each kill the next start must succeed without an
// error, remove what the kill left (saying so): none of the `.*.tmp-*`
// files the kill left is in the state directory after it.
func TestKillDuringSavesLeavesNoTemporaryFile(t *testing.T) {
	const kills = 30
	e := newEnv(t)
	file := filepath.Join(t.TempDir(), "subagent.yaml")
	conf := stormKillYAML(trapSink(t), 20) + "arm: {max_applications: 100000, max_applications_per_uid: 100000}\n"
	if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	e.start("--config", file)
	w := watchSaves(t, e.state)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); peerSets(t, e, stop, 10) }()
	go func() { defer wg.Done(); armNames(e, stop) }()
	defer func() { close(stop); wg.Wait() }()

	start := time.Now()
	left, missed := 0, 0
	landed := map[string]int{}
	for round := 1; round <= kills; round++ {
		// In turn: numbering.json's and the journal's temporary file
		// created (being written), then closed (written, being renamed).
		bases := []string{daemon.NumberingFile, notiflog.File}[round%2:][:1]
		mask, what := uint32(unix.IN_CREATE), "created"
		if round%4 >= 2 {
			mask, what = unix.IN_CLOSE_WRITE, "written"
		}
		b := w.next(bases, mask, 5*time.Second)
		if b == "" {
			missed++ // no save within 5 s: kill anyway
		}
		landed[b]++
		e.daemon.Process.Kill()
		<-e.daemonExited
		e.stopped = true
		found := temps(t, e.state)
		if len(found) > 0 {
			left++
		}
		w.drop()

		e.start("--config", file)
		log := e.daemonLog.String()
		for _, line := range strings.Split(log, "\n") {
			if strings.Contains(line, "level=ERROR") {
				t.Errorf("round %d (killed as %s's temporary file was %s): the start logged %s", round, b, what, line)
			}
		}
		if len(found) > 0 && !strings.Contains(log, "removed the temporary files of interrupted saves") {
			t.Errorf("round %d: the kill left %v, and the start did not say it removed them", round, found)
		}
		// The new daemon may be saving already (tree-generation is written in
		// the background as suppliers come): only what the kill left counts.
		for _, name := range temps(t, e.state) {
			if slices.Contains(found, name) {
				t.Fatalf("round %d: %s, left by the kill, is still in the state directory after the start", round, name)
			}
		}
	}
	t.Logf("%d kills in %v, at saves of %v: %d left temporary files that the next start removed",
		kills, time.Since(start).Round(time.Millisecond), landed, left)
	if left == 0 {
		t.Errorf("no kill left a temporary file: the kills did not land inside saves")
	}
	if missed > kills/3 {
		t.Errorf("%d of %d rounds saw no save within 5 s", missed, kills)
	}
}
