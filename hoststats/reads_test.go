package hoststats

import (
	"bytes"
	"encoding/binary"
	"io/fs"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/perfagent/subagent/spmi"
)

// opens counts, through inotify, the opens of every file under a root as
// the kernel sees them, whichever code opens them.
type opens struct {
	fd   int
	dirs map[int32]string // watch descriptor -> directory, relative to root
}

func watchOpens(t *testing.T, root string) *opens {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Skipf("inotify: %v", err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	o := &opens{fd: fd, dirs: map[int32]string{}}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		// Closes are watched too: inotify merges an event with an identical
		// one queued just before it, so two opens in a row would count once.
		wd, err := unix.InotifyAddWatch(fd, p, unix.IN_OPEN|unix.IN_CLOSE_NOWRITE)
		if err != nil {
			return err
		}
		o.dirs[int32(wd)], _ = filepath.Rel(root, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// drain returns the files opened since the previous drain, with counts.
func (o *opens) drain(t *testing.T) map[string]int {
	t.Helper()
	out := map[string]int{}
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Read(o.fd, buf)
		if err == unix.EAGAIN {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		for b := buf[:n]; len(b) >= unix.SizeofInotifyEvent; {
			var ev unix.InotifyEvent
			binary.Read(bytes.NewReader(b[:unix.SizeofInotifyEvent]), binary.NativeEndian, &ev)
			name := b[unix.SizeofInotifyEvent : unix.SizeofInotifyEvent+int(ev.Len)]
			b = b[unix.SizeofInotifyEvent+int(ev.Len):]
			if ev.Mask&unix.IN_Q_OVERFLOW != 0 {
				t.Fatal("inotify queue overflowed")
			}
			if ev.Mask&unix.IN_OPEN != 0 && ev.Mask&unix.IN_ISDIR == 0 && ev.Len > 0 {
				out[filepath.Join(o.dirs[ev.Wd], string(bytes.TrimRight(name, "\x00")))]++
			}
		}
	}
}

// Each file is read at most once per refresh, however many providers use
// it: /proc/stat (CPU and Proc) and /proc/self/net/snmp (IP, TCP, UDP and
// ICMP) included.
func TestEachSourceIsReadOncePerRefresh(t *testing.T) {
	cfg := FixtureConfig(copyFixture(t)) // no other test opens the copy
	h := spmi.NewHierarchy(spmi.Config{Base: testBase})
	for _, p := range providers(t, cfg) {
		h.Add(p)
	}
	o := watchOpens(t, filepath.Dir(cfg.ProcRoot)) // proc and sys
	for i := 0; i < 3; i++ {
		if s := h.Refresh(); len(s.Failures) != 0 {
			t.Fatalf("failures on the fixture: %v", s.Failures)
		}
		got := o.drain(t)
		for file, n := range got {
			if n != 1 {
				t.Errorf("refresh %d opened %s %d times", i+1, file, n)
			}
		}
		for _, file := range []string{"proc/stat", "proc/4242/net/snmp", "proc/1/stat", "sys/class/net/lo/ifindex"} {
			if got[file] == 0 {
				t.Errorf("refresh %d did not open %s (opened: %v)", i+1, file, got)
			}
		}
	}
}
