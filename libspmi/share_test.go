//go:build linux

package libspmi

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/dds"
	"github.com/perfagent/subagent/dds/ddstest"
)

const siCallocFailed = 194

// A C supplier of an allowed user other than root keeps to its share of
// the statistics and out of a reserved subtree, and is told why in
// SpmiErrno and SpmiErrmsg; root's supplier, beyond one user's share and
// into the reserved subtree, registers once the user's has left.
func TestCSupplierOfAnotherUserKeepsToItsShare(t *testing.T) {
	testutil.RequireRoot(t)
	bothLibs(t, func(t *testing.T, static bool) {
		run := t.TempDir()
		testutil.Traversable(t, run)
		d := &daemon{ddstest.StartConfig(t, run, dds.ServerConfig{Mode: 0o666, AllowUIDs: []uint32{testutil.Nobody},
			MaxStatsPerUID: 6, Reserve: []dds.Reservation{{Context: "DDS/IBM/Moretest/Reserved"}}})}
		bin := program(t, "driver", static)
		testutil.Traversable(t, filepath.Dir(bin))
		files := t.TempDir()
		testutil.Traversable(t, files)
		if err := os.Chown(files, testutil.Nobody, testutil.Nobody); err != nil {
			t.Fatal(err)
		}
		n := &sup{lineProc: startLineCmd(t, testutil.AsNobody(t, bin), "SUBAGENT_DDS_SOCKET=", "SUBAGENT_RUN_DIR="+run),
			file: filepath.Join(files, "SpmiSupl_hook")}
		n.ok("init %s 4096 guide", n.file) // 4 statistics
		n.fails(siDuplicate, []string{"context DDS/IBM/Moretest/Reserved is reserved for root and the daemon's own user (dds.reserve[0])",
			"uid 65534 may not register it"}, "add 0 300 DDS/IBM/Moretest/Reserved")
		n.ok("add 0 301 DDS/IBM/Moretest/A") // 2 more: the share
		n.fails(siCallocFailed, []string{"the suppliers of uid 65534 hold 6 statistics", "dds.max_stats_per_uid"}, "add 0 302 DDS/IBM/Moretest/B")
		if d.Node("DDS/IBM/Moretest/B/solutions") != nil || d.Node("DDS/IBM/Moretest/Reserved/solutions") != nil {
			t.Fatal("a refused context is served")
		}
		n.ok("exit")
		eventually(t, "nobody's contexts to go", func() bool { return d.Node("DDS/IBM/Test/gadgets") == nil })

		r := startSup(t, static, run)
		r.ok("init %s 4096 guide", r.file)
		for _, c := range []string{"add 0 300 DDS/IBM/Moretest/Reserved", "add 0 301 DDS/IBM/Moretest/A", "add 0 302 DDS/IBM/Moretest/B"} {
			r.ok("%s", c)
		}
		d.want(t, "DDS/IBM/Moretest/Reserved/solutions", "99.2.221.300.2", 0)
	})
}
