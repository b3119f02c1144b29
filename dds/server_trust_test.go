package dds

import (
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/ddswire/ddswiretest"
	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/client/testutil"
)

// The test binary doubles as a supplier run as another user: with
// DDS_INIT_TO=<socket> it sends an Init (without a descriptor) and prints
// the reply's code and message; with DDS_GO_SUPPLIER=<socket> it runs Go
// suppliers (client/ddsclient) as told on stdin (goSuppliers).
func TestMain(m *testing.M) {
	if path := os.Getenv("DDS_GO_SUPPLIER"); path != "" {
		goSuppliers(path, os.Stdin, os.Stdout)
		os.Exit(0)
	}
	if path := os.Getenv("DDS_INIT_TO"); path != "" {
		c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: path, Net: "unix"})
		if err != nil {
			fmt.Println("dial:", err)
			os.Exit(0)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		if err := ddswire.WriteMessageFD(c, ddswiretest.GuideInit(), -1, ddswire.Limits{}); err != nil {
			fmt.Println("write:", err)
		}
		r, err := ddswire.ReadMessage(c, ddswire.Limits{})
		if err != nil {
			fmt.Println("read:", err)
			os.Exit(0)
		}
		fmt.Println(r.(*ddswire.Reply).Errno, r.(*ddswire.Reply).Errmsg)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func trustServer(t *testing.T, cfg ServerConfig) (*Server, *testutil.Buffer) {
	t.Helper()
	dir := t.TempDir()
	testutil.Traversable(t, dir)
	lg := &testutil.Buffer{}
	cfg.Socket = filepath.Join(dir, "dds.sock")
	cfg.Logger = slog.New(slog.NewTextHandler(lg, nil))
	s, err := NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { s.Serve(); close(done) }()
	t.Cleanup(func() { s.Close(); <-done })
	return s, lg
}

// Listing another user keeps root and the daemon's own user allowed.
func TestAllowListKeepsTheOwners(t *testing.T) {
	s, _ := trustServer(t, ServerConfig{AllowUIDs: []uint32{12345}})
	ts := newSupFile(t, ddswiretest.GuideInit())
	ts.register(s, spmierr.SiSuccess)
}

// A user not on the list gets an SPMI error naming the setting, not a
// connection reset, and many tries are logged once.
func TestRefusedSupplierGetsTheReason(t *testing.T) {
	s, lg := trustServer(t, ServerConfig{Mode: 0o666})
	for range 5 {
		cmd := testutil.AsNobody(t, os.Args[0])
		cmd.Env = append(os.Environ(), "DDS_INIT_TO="+s.cfg.Socket)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("supplier as nobody: %v\n%s", err, out)
		}
		if want := "uid 65534 may not register suppliers (dds.allow_uids, dds.allow_gids)"; !strings.Contains(string(out), want) || !strings.Contains(string(out), "SiInitFailed") {
			t.Fatalf("refused supplier read %q, want SiInitFailed and %q", out, want)
		}
	}
	if n := strings.Count(lg.String(), "refused a connection"); n != 1 {
		t.Errorf("5 refusals logged %d times:\n%s", n, lg)
	}
	if !strings.Contains(lg.String(), "uid=65534") {
		t.Errorf("refusal log lacks the uid:\n%s", lg)
	}
}

// The statistics of all suppliers together are bounded: a registration
// that would pass dds.max_stats_all is refused naming it, and the room
// comes back when a supplier leaves.
func TestStatisticsOfAllSuppliersAreBounded(t *testing.T) {
	n := 0 // what the guide's sample registers at Init
	for _, c := range ddswiretest.GuideInit().Contexts {
		n += len(c.Stats)
	}
	s, _ := trustServer(t, ServerConfig{MaxStatsAll: n + 1})
	a := newSupFile(t, ddswiretest.GuideInit())
	a.register(s, spmierr.SiSuccess)
	b := newSupFile(t, ddswiretest.GuideInit())
	b.init.Contexts = b.init.Contexts[:1] // the vendor context alone has no statistics
	for i := range ddswiretest.GuideInit().Contexts {
		if c := ddswiretest.GuideInit().Contexts[i]; len(c.Stats) > 0 {
			c.Path, c.ASN = strings.Replace(c.Path, "Test", "Other", 1), 230
			b.init.Contexts = append(b.init.Contexts, c)
			break
		}
	}
	r := b.register(s, spmierr.SiCallocFailed)
	if !strings.Contains(r.Errmsg, "dds.max_stats_all") {
		t.Errorf("refusal %q does not name dds.max_stats_all", r.Errmsg)
	}
	a.send(&ddswire.Exit{}, -1)
	testutil.Eventually(t, "the first supplier's statistics to be released", 5*time.Second, func() bool {
		s.reg.mu.Lock()
		defer s.reg.mu.Unlock()
		return s.reg.nstats == 0
	})
	c := newSupFile(t, ddswiretest.GuideInit())
	c.register(s, spmierr.SiSuccess)
}
