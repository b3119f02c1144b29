package dds

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/ddsclient"
	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/client/testutil"
)

// goSuppliers runs Go suppliers on the socket at path, one command line
// of in at a time, each answered with one line on out: "ok" or
// "err <code> <message>". At EOF every supplier exits.
//
//	start <vendor> <vendor asn> <context> <statistics> <template statistics> <file>
//	add <supplier index> <path> <asn>   (an instance of its template)
func goSuppliers(path string, in io.Reader, out io.Writer) {
	type sup struct {
		s *ddsclient.Supplier
		t *ddsclient.Template
	}
	var sups []sup
	defer func() {
		for _, s := range sups {
			s.s.Exit()
		}
	}()
	answer := func(err error) {
		if err != nil {
			fmt.Fprintln(out, "err", spmierr.CodeOf(err), strings.ReplaceAll(err.Error(), "\n", " "))
			return
		}
		fmt.Fprintln(out, "ok")
	}
	num := func(s string) uint32 { n, _ := strconv.ParseUint(s, 10, 32); return uint32(n) }
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 7 && f[0] == "start":
			v := ddsclient.NewVendor(f[1], f[1], num(f[2]))
			cx := v.Context(f[3], f[3], 1)
			for i := range num(f[4]) {
				cx.Counter(fmt.Sprint("v", i+1), "value", i+1)
			}
			t := v.Template("T", "template")
			for i := range num(f[5]) {
				t.Counter(fmt.Sprint("t", i+1), "value", i+1)
			}
			s, err := ddsclient.Start(v, f[6], &ddsclient.Options{Socket: path})
			if err == nil {
				sups = append(sups, sup{s, t})
			}
			answer(err)
		case len(f) == 4 && f[0] == "add" && int(num(f[1])) < len(sups):
			s := sups[num(f[1])]
			_, err := s.s.AddCx(s.t, f[2], "instance", num(f[3]))
			answer(err)
		default:
			fmt.Fprintln(out, "err bad command", sc.Text())
		}
	}
}

// asNobodySuppliers runs goSuppliers as uid 65534 against s; its shared
// files go to a directory of its own. It ends with the test.
func asNobodySuppliers(t *testing.T, s *Server) (do func(format string, args ...any) string, dir string, stop func()) {
	t.Helper()
	dir = t.TempDir()
	testutil.Traversable(t, dir)
	if err := os.Chown(dir, testutil.Nobody, testutil.Nobody); err != nil {
		t.Fatal(err)
	}
	cmd := testutil.AsNobody(t, os.Args[0])
	cmd.Env = append(os.Environ(), "DDS_GO_SUPPLIER="+s.cfg.Socket)
	cmd.Stderr = os.Stderr
	in, _ := cmd.StdinPipe()
	outr, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(outr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	stop = func() { in.Close(); cmd.Wait() }
	t.Cleanup(func() { cmd.Process.Kill(); stop() })
	do = func(format string, args ...any) string {
		t.Helper()
		c := fmt.Sprintf(format, args...)
		fmt.Fprintln(in, c)
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("%s: the supplier exited", c)
			}
			return l
		case <-time.After(time.Minute):
			t.Fatalf("%s: no answer in a minute", c)
		}
		return ""
	}
	return do, dir, stop
}

func wantLine(t *testing.T, what, got string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(got, s) {
			t.Fatalf("%s: %q lacks %q", what, got, s)
		}
	}
}

// Go suppliers of an allowed user other than root fill that user's share
// and no more: the refusal reaches them naming the setting; a vendor name
// reserved for the owners is refused to them even before anyone uses it.
// Root's supplier, above one user's share, still registers, and the
// user's room comes back when its suppliers leave.
func TestGoSuppliersOfAnotherUserKeepToTheirShare(t *testing.T) {
	testutil.RequireRoot(t)
	s, _ := trustServer(t, ServerConfig{Mode: 0o666, AllowUIDs: []uint32{nobody}, MaxStatsAll: 100, MaxStatsPerUID: 25,
		Reserve: []Reservation{{Context: "DDS/RootVendor"}}})
	do, dir, stop := asNobodySuppliers(t, s)
	wantLine(t, "nobody taking root's vendor name first", do("start RootVendor 4242 App 1 0 %s/c.shm", dir),
		"err SiDuplicate", "context DDS/RootVendor is reserved for root and the daemon's own user (dds.reserve[0]); uid 65534 may not register it")
	wantLine(t, "nobody's first supplier", do("start Nobody 100 C 20 5 %s/a.shm", dir), "ok")
	wantLine(t, "nobody's instance filling its share", do("add 0 DDS/Nobody/i1 10"), "ok")
	wantLine(t, "nobody's instance beyond its share", do("add 0 DDS/Nobody/i2 11"),
		"err SiCallocFailed", "AddCx DDS/Nobody/i2: the suppliers of uid 65534 hold 25 statistics", "share of one user, 25 (dds.max_stats_per_uid)")
	wantLine(t, "nobody's second supplier", do("start Nobody2 101 C 1 0 %s/b.shm", dir),
		"err SiCallocFailed", "dds.max_stats_per_uid")

	v := ddsclient.NewVendor("RootVendor", "root's", 4242)
	app := v.Context("App", "root's application", 1)
	for i := range uint32(60) {
		app.Counter(fmt.Sprint("v", i+1), "value", i+1)
	}
	root, err := ddsclient.Start(v, filepath.Join(t.TempDir(), "root.shm"), &ddsclient.Options{Socket: s.cfg.Socket})
	if err != nil {
		t.Fatalf("root's supplier beside nobody's full share: %v", err)
	}
	defer root.Exit()
	stop()
	testutil.Eventually(t, "nobody's statistics to be released", 10*time.Second, func() bool { return s.reg.statsOf(nobody) == 0 })
	if n := s.reg.statsOf(0); n != 60 {
		t.Fatalf("root holds %d statistics, want 60", n)
	}
}
