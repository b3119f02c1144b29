package hoststats

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/spmi"
)

// A statfs that hangs (a dead NFS server) costs one timeout: the mount
// keeps its instance without values, is not asked again while the call
// hangs, and has values again once the call returns.
func TestHungStatfs(t *testing.T) {
	cfg := FixtureConfig(fixtureRoot(t))
	release := make(chan struct{})
	var calls atomic.Int32
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	cfg.Statfs = func(path string, st *unix.Statfs_t) error {
		if path == "/home" {
			calls.Add(1)
			<-release
		}
		return FixtureStatfs(path, st)
	}
	cfg.StatfsTimeout = 50 * time.Millisecond
	ps := providers(t, cfg)
	num := spmi.NewNumbering("")

	start := time.Now()
	s := build(t, ps, num)
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("refresh took %v with a hung mount", took)
	}
	if err := s.Failures["statfs /home"]; !errors.Is(err, errStuck) {
		t.Fatalf("failures %v, want statfs /home stuck", s.Failures)
	}
	wantNoValue(t, s, "FS/home/size")
	wantText(t, s, "FS/home/mount", "/home")
	wantUint(t, s, "FS/root/inodes", 15261696)

	s = build(t, ps, num)
	if n := calls.Load(); n != 1 {
		t.Errorf("statfs of the hung mount called %d times, want 1", n)
	}
	wantNoValue(t, s, "FS/home/size")

	once.Do(func() { close(release) })
	// Each refresh until one sees the call returned.
	testutil.Eventually(t, "FS/home to have a value after its statfs returned", 10*time.Second, func() bool {
		s = build(t, ps, num)
		return node(t, s, "FS/home/size").Value.OK()
	})
	if len(s.Failures) != 0 {
		t.Errorf("failures after recovery: %v", s.Failures)
	}
}

// A mount statfs cannot reach (gone, or no permission) has no values;
// the failure names it.
func TestStatfsError(t *testing.T) {
	cfg := FixtureConfig(fixtureRoot(t))
	cfg.Statfs = func(path string, st *unix.Statfs_t) error {
		if path == "/boot" {
			return unix.EACCES
		}
		return FixtureStatfs(path, st)
	}
	s := build(t, providers(t, cfg), nil)
	if err := s.Failures["statfs /boot"]; !errors.Is(err, unix.EACCES) {
		t.Errorf("failures %v", s.Failures)
	}
	wantNoValue(t, s, "FS/boot/%used")
	wantText(t, s, "FS/boot/fstype", "ext4")
	wantUint(t, s, "FS/run/size", 407586*4)
}
