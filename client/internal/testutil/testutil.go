// Package testutil holds what the client module's tests share, copied from
// the daemon's internal/testutil (this module cannot import the daemon's):
// one polling helper bounded in time, and the local-trust tests' other
// user.
package testutil

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

// Nobody is the uid and gid the attacker runs as (Debian's nobody/nogroup).
const Nobody = 65534

// Eventually polls cond every 10 ms until it holds or within passes, then
// fails the test naming what it waited for.
func Eventually(t testing.TB, what string, within time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		if cond() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", within, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// RequireRoot fails (never skips) a test that needs root to act as another
// user: CI runs as root, so a skip there would hide a missing check.
func RequireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatalf("this test runs an attacker as uid %d with setpriv and needs root; run it as root (CI does)", Nobody)
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Fatalf("setpriv (util-linux) is needed to run as uid %d: %v", Nobody, err)
	}
}
