//go:build linux

package libspmi

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/perfagent/subagent/client/testutil"
)

// The library never sends its shared file to dds.sock in a directory
// another user could have made (0777, owned by uid 65534): SpmiDdsInit
// fails with SiInitFailed naming the directory. Made trusted, it works.
func TestUntrustedRunDirRefused(t *testing.T) {
	testutil.RequireRoot(t)
	bothLibs(t, func(t *testing.T, static bool) {
		run := filepath.Join(t.TempDir(), "run")
		if err := os.Mkdir(run, 0o700); err != nil {
			t.Fatal(err)
		}
		d := startDaemon(t, run)
		if err := os.Chown(run, testutil.Nobody, testutil.Nobody); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(run, 0o777); err != nil {
			t.Fatal(err)
		}
		s := startSup(t, static, run)
		s.fails(siInitFailed, []string{run + "/dds.sock", "directory " + run + " is not trusted", "mode 0777"}, "init %s 4096 guide", s.file)
		if d.Node("DDS/IBM/Test/gadgets") != nil {
			t.Fatal("the daemon serves the refused supplier")
		}
		if _, err := os.Lstat(s.file); !os.IsNotExist(err) {
			t.Fatalf("file left behind: %v", err)
		}
		if err := os.Chmod(run, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(run, 0, 0); err != nil {
			t.Fatal(err)
		}
		s.ok("init %s 4096 guide", s.file)
		d.want(t, "DDS/IBM/Test/gadgets", "99.2.220.1", 0)
	})
}
