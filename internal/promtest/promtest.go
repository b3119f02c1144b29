// Package promtest runs Debian's Prometheus and promtool for the tests of
// deploy/ (rules, alerts, dashboard) and of the fleet in cmd/subagent, and
// reads the PromQL those files hold.
package promtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/testutil"
)

// Tool returns the path of Prometheus's program name (prometheus,
// promtool), which scripts/install-test-deps.sh installs with Debian's
// prometheus package. Missing, it fails in CI and skips, saying what to
// install, elsewhere.
func Tool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	msg := name + " is not installed: Debian's prometheus package has it (scripts/install-test-deps.sh as root installs it)"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// Run runs a tool with a time bound and returns its combined output.
func Run(t testing.TB, dir, bin string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// Server is a Prometheus the test started on loopback.
type Server struct {
	Addr string
	Log  *testutil.Buffer
	cmd  *exec.Cmd
}

// Start runs prometheus on config with a temporary storage directory on a
// free loopback port until the test ends, and waits (bounded) until it is
// ready.
func Start(t testing.TB, config string, extra ...string) *Server {
	t.Helper()
	bin := Tool(t, "prometheus")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	s := &Server{Addr: addr, Log: &testutil.Buffer{}}
	args := append([]string{"--config.file=" + config, "--storage.tsdb.path=" + filepath.Join(t.TempDir(), "data"),
		"--web.listen-address=" + addr, "--log.level=warn"}, extra...)
	s.cmd = exec.Command(bin, args...)
	s.cmd.Stdout, s.cmd.Stderr = s.Log, s.Log
	// It dies with the test binary, whatever ends it.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.cmd.Process.Kill()
		s.cmd.Wait()
		if t.Failed() {
			t.Logf("prometheus %s log, last lines:\n%s", addr, testutil.Tail(s.Log.String(), 30))
		}
	})
	testutil.Eventually(t, "prometheus on "+addr+" to be ready", time.Minute, func() bool {
		_, err := get("http://" + addr + "/-/ready")
		return err == nil
	})
	return s
}

// Sample is one series of an instant vector.
type Sample struct {
	Metric map[string]string
	Value  float64
}

// Query evaluates expr now.
func (s *Server) Query(expr string) ([]Sample, error) {
	body, err := get("http://" + s.Addr + "/api/v1/query?query=" + url.QueryEscape(expr))
	if err != nil {
		return nil, fmt.Errorf("query %s: %v", expr, err)
	}
	var r struct {
		Status string
		Error  string
		Data   struct {
			ResultType string
			Result     []struct {
				Metric map[string]string
				Value  [2]any
			}
		}
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("query %s: %v", expr, err)
	}
	if r.Status != "success" || r.Data.ResultType != "vector" {
		return nil, fmt.Errorf("query %s: %s %s (%s)", expr, r.Status, r.Error, r.Data.ResultType)
	}
	out := make([]Sample, 0, len(r.Data.Result))
	for _, x := range r.Data.Result {
		str, _ := x.Value[1].(string)
		v, err := strconv.ParseFloat(str, 64)
		if err != nil {
			return nil, fmt.Errorf("query %s: value %v", expr, x.Value[1])
		}
		out = append(out, Sample{Metric: x.Metric, Value: v})
	}
	return out, nil
}

func get(u string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("%s: %s", resp.Status, b)
	}
	return b, err
}

// TargetErrors returns each scrape target's last error that has one
// (instance -> error), to say why a target is down.
func (s *Server) TargetErrors() (map[string]string, error) {
	body, err := get("http://" + s.Addr + "/api/v1/targets?state=active")
	if err != nil {
		return nil, err
	}
	var r struct {
		Data struct {
			ActiveTargets []struct {
				Labels    map[string]string
				LastError string
			}
		}
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, tg := range r.Data.ActiveTargets {
		if tg.LastError != "" {
			out[tg.Labels["instance"]] = tg.LastError
		}
	}
	return out, nil
}
