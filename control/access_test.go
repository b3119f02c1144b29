package control_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/consumer"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"

	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/control"
	"github.com/perfagent/subagent/control/controltest"
	"github.com/perfagent/subagent/internal/unixsock"
	"github.com/perfagent/subagent/spmi"
)

// The test binary doubles as a client run as another user: with
// CONTROL_CLIENT="<run dir> <op> <path>" it makes one call and prints the
// outcome.
func TestMain(m *testing.M) {
	if spec := os.Getenv("CONTROL_CLIENT"); spec != "" {
		f := strings.Fields(spec)
		c, err := consumer.Dial(f[0])
		if err != nil {
			fmt.Println("dial:", err)
			os.Exit(0)
		}
		ctx := context.Background()
		switch f[1] {
		case "get":
			smp, err := c.Read(ctx, []string{f[2]})
			if err == nil {
				if it := smp.Items[0]; it.Err != nil {
					err = it.Err
				} else {
					fmt.Println("value", it.Value)
				}
			}
			fmt.Println("err:", err)
		case "create":
			fmt.Println("err:", c.Create(ctx, f[2]))
		case "delete":
			fmt.Println("err:", c.Delete(ctx, f[2]))
		case "expr.create":
			fmt.Println("err:", c.ExprCreate(ctx, spmiwire.ExprDef{Kind: "derived", Name: f[2], Expr: "Ref/x/hits * 2"}))
		case "expr.delete":
			fmt.Println("err:", c.ExprDelete(ctx, "derived", f[2]))
		case "slo.create":
			fmt.Println("err:", c.SLOCreate(ctx, spmiwire.ObjectiveDef{Name: f[2], Application: "*", Transaction: "*", Target: 0.99, Window: 3600}))
		case "slo.delete":
			fmt.Println("err:", c.SLODelete(ctx, f[2]))
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// refs is a provider of contexts created on request (Ref/<name>).
type refs struct {
	mu    sync.Mutex
	names []string
}

var (
	refCx   = spmi.CxDesc{Name: "Ref", Descr: "Created on request", ASN: 50, Inst: ddswire.SiCfgInst}
	refTpl  = spmi.CxDesc{Descr: "A referenced thing"}
	refStat = spmiwire.StatDesc{Name: "hits", Descr: "Hits", ASN: 1, Val: ddswire.SiQuantity}
)

func (r *refs) Name() string { return "Ref" }
func (r *refs) Collect(b *spmi.Builder) error {
	cx, _ := b.Context(nil, &refCx)
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, n := range r.names {
		inst, _ := b.Instance(cx, &refTpl, n, "", uint32(i+1))
		b.Stat(inst, &refStat, spmiwire.Uint(5))
	}
	return nil
}
func (r *refs) Create(path string) (bool, error) {
	name, ok := strings.CutPrefix(path, "Ref/")
	if !ok {
		return false, nil
	}
	name, _, _ = strings.Cut(name, "/")
	r.mu.Lock()
	defer r.mu.Unlock()
	r.names = append(r.names, name)
	return true, nil
}
func (r *refs) Delete(path string) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(r.names)
	r.names = nil
	return n > 0, nil
}
func (r *refs) count() int { r.mu.Lock(); defer r.mu.Unlock(); return len(r.names) }

func serveAccess(t *testing.T, a control.Access) (dir string, r *refs, log *testutil.Buffer) {
	t.Helper()
	dir = runDir(t)
	testutil.Traversable(t, dir)
	r, log = &refs{}, &testutil.Buffer{}
	controltest.ServeServer(t, dir, &control.Server{H: controltest.Hierarchy(0, r), Log: slog.New(slog.NewTextHandler(log, nil)), Access: a})
	return dir, r, log
}

func asNobody(t *testing.T, dir, op, path string) string {
	t.Helper()
	cmd := testutil.AsNobody(t, os.Args[0])
	cmd.Env = append(os.Environ(), "CONTROL_CLIENT="+dir+" "+op+" "+path)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("client as nobody: %v\n%s", err, out)
	}
	return string(out)
}

// By default (0660) another user cannot even open the socket.
func TestOtherUsersCannotConnectByDefault(t *testing.T) {
	dir, r, _ := serveAccess(t, control.Access{})
	fi, err := os.Stat(spmiwire.SocketPath(dir))
	if err != nil || fi.Mode().Perm() != 0o660 {
		t.Fatalf("socket mode: %v %v, want 0660", fi.Mode(), err)
	}
	out := asNobody(t, dir, "create", "Ref/x")
	if !strings.Contains(out, "permission denied") {
		t.Errorf("nobody connecting to a 0660 socket: %q", out)
	}
	if r.count() != 0 {
		t.Error("a refused user created a context")
	}
}

// With the socket opened to everyone, the allow list still refuses, in
// the socket's own protocol.
func TestUnlistedUserIsRefusedWithTheReason(t *testing.T) {
	dir, _, log := serveAccess(t, control.Access{Mode: 0o666})
	out := asNobody(t, dir, "get", "Ref/x/hits")
	if !strings.Contains(out, "uid 65534 may not use the control socket (control.allow_uids, control.allow_gids)") {
		t.Errorf("unlisted user: %q", out)
	}
	if !strings.Contains(log.String(), "uid=65534") {
		t.Errorf("refusal not logged with the uid:\n%s", log)
	}
}

// A reader may read but neither create nor delete; a read of a missing
// context creates nothing. Root (an admin) may create, and that is logged.
func TestReadersReadAdminsChange(t *testing.T) {
	dir, r, log := serveAccess(t, control.Access{Mode: 0o666, Readers: unixsock.Allow{UIDs: []uint32{testutil.Nobody}}})
	if out := asNobody(t, dir, "get", "Ref/x/hits"); !strings.Contains(out, "SiNotFound") {
		t.Errorf("reader's get of a missing context: %q", out)
	}
	if out := asNobody(t, dir, "create", "Ref/x"); !strings.Contains(out, "uid 65534 may not create") {
		t.Errorf("reader's create: %q", out)
	}
	if r.count() != 0 {
		t.Fatal("a reader created a context")
	}
	c := connect(t, consumer.Dial, dir)
	if err := c.Create(context.Background(), "Ref/x"); err != nil {
		t.Fatalf("root's create: %v", err)
	}
	if !strings.Contains(log.String(), "control: changed") || !strings.Contains(log.String(), "op=create path=Ref/x uid=0") {
		t.Errorf("change not logged with who asked:\n%s", log)
	}
	if out := asNobody(t, dir, "get", "Ref/x/hits"); !strings.Contains(out, "value 5") {
		t.Errorf("reader's get after root created: %q", out)
	}
	if out := asNobody(t, dir, "delete", "Ref/x"); !strings.Contains(out, "uid 65534 may not delete") || r.count() != 1 {
		t.Errorf("reader's delete: %q (contexts %d)", out, r.count())
	}
	// An admin list widens changes to another user.
	dir2, r2, _ := serveAccess(t, control.Access{Mode: 0o666, Readers: unixsock.Allow{UIDs: []uint32{testutil.Nobody}},
		Admins: unixsock.Allow{UIDs: []uint32{testutil.Nobody}}})
	if out := asNobody(t, dir2, "create", "Ref/y"); !strings.Contains(out, "err: <nil>") || r2.count() != 1 {
		t.Errorf("listed admin's create: %q", out)
	}
}

// An over-long request is answered with an error and the connection
// closed; the daemon keeps no more than the bound per connection.
func TestOverLongRequestIsRefused(t *testing.T) {
	dir := serveCPU(t, 0)
	conn, err := net.Dial("unix", spmiwire.SocketPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	go func() {
		big := bytes.Repeat([]byte("x"), 1<<20)
		for range 16 {
			if _, err := conn.Write(big); err != nil {
				return
			}
		}
	}()
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || !strings.Contains(line, fmt.Sprintf("control request longer than %d bytes", spmiwire.MaxRequest)) {
		t.Fatalf("over-long request answered %q (%v)", line, err)
	}
	c := connect(t, consumer.Dial, dir)
	paths := make([]string, spmiwire.MaxPaths)
	for i := range paths {
		paths[i] = strings.Repeat("CPU/cpu0/idle/", 5)
	}
	if _, err := c.Read(context.Background(), paths); err == nil || !strings.Contains(err.Error(), "ask for fewer paths") {
		t.Errorf("client's over-long get: %v", err)
	}
}

// stores count the changes that reach them.
type stores struct {
	mu      sync.Mutex
	changes int
}

func (s *stores) change() error                        { s.mu.Lock(); s.changes++; s.mu.Unlock(); return nil }
func (s *stores) count() int                           { s.mu.Lock(); defer s.mu.Unlock(); return s.changes }
func (s *stores) List() []spmiwire.ExprDef             { return nil }
func (s *stores) Create(spmiwire.ExprDef) error        { return s.change() }
func (s *stores) Delete(string, string) error          { return s.change() }
func (s *sloStore) List() []spmiwire.ObjectiveDef      { return nil }
func (s *sloStore) Create(spmiwire.ObjectiveDef) error { return s.stores.change() }
func (s *sloStore) Delete(string) error                { return s.stores.change() }

type sloStore struct{ stores *stores }

// A reader may not create or delete derived statistics, alarms or
// objectives: they are changes, for admins only, like create and delete.
func TestReadersChangeNoExpressionOrObjective(t *testing.T) {
	dir := runDir(t)
	testutil.Traversable(t, dir)
	st := &stores{}
	controltest.ServeServer(t, dir, &control.Server{H: controltest.Hierarchy(0, &refs{}), Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Access: control.Access{Mode: 0o666, Readers: unixsock.Allow{UIDs: []uint32{testutil.Nobody}}}, Exprs: st, SLOs: &sloStore{st}})
	for _, op := range []string{"expr.create", "expr.delete", "slo.create", "slo.delete"} {
		if out := asNobody(t, dir, op, "mine"); !strings.Contains(out, "uid 65534 may not "+op) {
			t.Errorf("reader's %s: %q", op, out)
		}
	}
	if st.count() != 0 {
		t.Fatalf("%d changes of a reader reached the stores", st.count())
	}
	c := connect(t, consumer.Dial, dir)
	if err := c.SLODelete(context.Background(), "mine"); err != nil || st.count() != 1 {
		t.Errorf("root's slo.delete: %v (changes %d)", err, st.count())
	}
}
