package control_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/consumer"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/client/spmiwire"

	"github.com/perfagent/subagent/control/controltest"
	"github.com/perfagent/subagent/spmi"
)

type fixedProvider struct{ n uint64 }

var (
	cpuCx = spmi.CxDesc{Name: "CPU", Descr: "Processors", ASN: 1, Inst: ddswire.SiCfgInst}
	tpl   = spmi.CxDesc{Descr: "Processor"}
	idle  = spmiwire.StatDesc{Name: "idle", Descr: "Idle time", ASN: 4, Val: ddswire.SiCounter}
)

func (p *fixedProvider) Name() string { return "CPU" }
func (p *fixedProvider) Collect(b *spmi.Builder) error {
	p.n += 100
	c, _ := b.Context(nil, &cpuCx)
	i, _ := b.Instance(c, &tpl, "cpu0", "", 1)
	return b.Stat(i, &idle, spmiwire.Uint(p.n))
}

// runDir is a new run directory for a control socket.
func runDir(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "run")
	if err := os.Mkdir(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	return dir
}

// serveCPU serves one processor, CPU/cpu0, whose idle counter rises by
// 100 each time it is read, at most every minAge; it returns the run
// directory.
func serveCPU(t *testing.T, minAge time.Duration) string {
	t.Helper()
	dir := runDir(t)
	controltest.Serve(t, dir, controltest.Hierarchy(minAge, &fixedProvider{}))
	return dir
}

// connect connects to the control socket in dir with open (consumer.Dial
// for the raw requests, consumer.Open for the consumer API) until the
// test ends.
func connect[C io.Closer](t *testing.T, open func(string) (C, error), dir string) C {
	t.Helper()
	c, err := open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestPeekAndGetThroughTheSocket(t *testing.T) {
	c := connect(t, consumer.Dial, serveCPU(t, 0))
	ctx := context.Background()
	entries, err := c.Peek(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, e := range entries {
		paths = append(paths, e.Path+"="+e.Rel)
	}
	if got := strings.Join(paths, " "); got != "CPU/=1 CPU/cpu0/=1.1 CPU/cpu0/idle=1.1.4" {
		t.Fatalf("peek: %s", got)
	}
	if entries[2].OID != "1.3.6.1.4.1.32473.1.1.1.4.0" || entries[2].Stat == nil || entries[0].Inst != spmiwire.InstText(ddswire.SiCfgInst) {
		t.Fatalf("entry: %+v", entries[2])
	}
	ss, err := consumer.NewPathSet(ctx, c, "CPU/cpu0/idle")
	if err != nil {
		t.Fatal(err)
	}
	r1, _ := ss.Read(ctx)
	// The second read asks for a snapshot newer than the first (ReadAfter):
	// no wait makes it one.
	r2, _ := ss.Read(ctx)
	if !r2.Values[0].HasRate || r2.Values[0].Change != 100 || r1.Values[0].Value.String() == r2.Values[0].Value.String() {
		t.Fatalf("second read: %+v after %+v", r2.Values[0], r1.Values[0])
	}
	if _, err := c.Peek(ctx, "Nope/"); spmierr.CodeOf(err) != spmierr.SiNotFound || !strings.Contains(err.Error(), "Nope") {
		t.Fatalf("unknown path: %v", err)
	}
	if _, err := consumer.NewPathSet(ctx, c, "CPU/cpu9/idle"); spmierr.CodeOf(err) != spmierr.SiNotFound {
		t.Fatalf("unknown stat: %v", err)
	}
}

// A statset read through the socket asks for values newer than its
// previous read: the daemon reads them again once the previous ones are
// min_age old, not sooner.
func TestStatSetThroughTheSocketReadsNewerSnapshots(t *testing.T) {
	const minAge = 200 * time.Millisecond
	c := connect(t, consumer.Dial, serveCPU(t, minAge))
	ctx := context.Background()
	ss, err := consumer.NewPathSet(ctx, c, "CPU/cpu0/idle")
	if err != nil {
		t.Fatal(err)
	}
	ss.Read(ctx)
	for i := 0; i < 3; i++ {
		r, err := ss.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if v := r.Values[0]; r.Elapsed < minAge || !v.HasRate || v.Change != 100 {
			t.Fatalf("read %d: elapsed %v, %+v; want at least %v and one collection's change", i+2, r.Elapsed, v, minAge)
		}
	}
}

// A plain get is served from the cached snapshot within the minimum age.
func TestGetWithinTheMinimumAgeIsCached(t *testing.T) {
	c := connect(t, consumer.Dial, serveCPU(t, time.Hour))
	ctx := context.Background()
	a, _ := c.Read(ctx, []string{"CPU/cpu0/idle"})
	b, _ := c.Read(ctx, []string{"CPU/cpu0/idle"})
	if !a.Time.Equal(b.Time) {
		t.Fatal("get without after refreshed within the minimum age")
	}
}

// A reader cannot make the daemon read more often than min_age by asking
// for values after a time to come: its requests wait instead.
func TestReadersCannotForceReadings(t *testing.T) {
	const minAge = 100 * time.Millisecond
	c := connect(t, consumer.Dial, serveCPU(t, minAge))
	ctx := context.Background()
	first, err := c.Read(ctx, []string{"CPU/cpu0/idle"})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var last spmiwire.Sample
	for range 10 {
		if last, err = c.ReadAfter(ctx, []string{"CPU/cpu0/idle"}, time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	took := time.Since(start)
	n := (last.Items[0].Value.Uint64() - first.Items[0].Value.Uint64()) / 100
	if n < 10 || n > 1+uint64(took/minAge) {
		t.Fatalf("%d readings for 10 requests in %v, want from 10 to %d (one per min_age)", n, took, 1+took/minAge)
	}
}

func TestMalformedRequestGetsAnError(t *testing.T) {
	conn, err := net.Dial("unix", spmiwire.SocketPath(serveCPU(t, 0)))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	rd := bufio.NewReader(conn)
	for _, req := range []string{"{nonsense\n", `{"op":"explode"}` + "\n", `{"op":"get"}` + "\n"} {
		conn.Write([]byte(req))
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(line, `"code":187`) {
			t.Errorf("%q answered %s", req, line)
		}
	}
}
