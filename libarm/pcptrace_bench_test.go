package libarm

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/testutil"
)

// BenchmarkPCPTracePair is the peer of BenchmarkCStartStop that pays a
// message per call: pmtracebegin + pmtraceend of PCP's trace library, sent
// to a real trace PMDA under a private pmcd. sync is the library's default
// (pmtraceend waits for the PMDA's ack); async only sends.
func BenchmarkPCPTracePair(b *testing.B) {
	bin := buildPCPTrace(b)
	pm := startTracePMCD(b)
	seq := 0
	for _, mode := range []string{"sync", "async"} {
		b.Run(mode, func(b *testing.B) {
			// A tag per run, so the PMDA's count for it is this run's alone.
			seq++
			ns, err := pm.pairs(b, bin, mode, fmt.Sprintf("armbench-%s-%d", mode, seq))
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(ns, "ns/pair")
		})
	}
}

// pairs runs b.N pairs through pcptrace and checks that the PMDA counted
// them all. pcptrace holds its connection until its stdin closes, so that
// every message can reach the PMDA first.
func (pm *tracePMCD) pairs(b *testing.B, bin, mode, tag string) (float64, error) {
	c := exec.Command(bin, mode, strconv.Itoa(b.N), tag)
	c.Env = append(os.Environ(), "PCP_TRACE_HOST=127.0.0.1", "PCP_TRACE_PORT="+strconv.Itoa(pm.tracePort))
	c.Stderr = os.Stderr
	stdin, err := c.StdinPipe()
	if err != nil {
		return 0, err
	}
	stdout, err := c.StdoutPipe()
	if err != nil {
		return 0, err
	}
	b.ResetTimer()
	if err := c.Start(); err != nil {
		return 0, err
	}
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	b.StopTimer()
	ns, err := strconv.ParseFloat(strings.TrimSpace(line), 64)
	if err == nil {
		pm.waitCount(b, tag, uint64(b.N)+1) // +1: the untimed first pair
	}
	stdin.Close()
	return ns, errors.Join(err, c.Wait())
}

// buildPCPTrace compiles testdata/pcptrace.c, skipping when PCP's trace
// library or pmcd is absent (scripts/install-bench-deps.sh installs both).
func buildPCPTrace(b *testing.B) string {
	if _, err := os.Stat("/usr/include/pcp/trace.h"); err != nil {
		b.Skip("PCP's trace library is not installed (apt-get install libpcp-trace2-dev)")
	}
	bin := filepath.Join(b.TempDir(), "pcptrace")
	if err := cc("-O2", "-Wall", "-Werror", "-o", bin, "testdata/pcptrace.c", "-lpcp_trace"); err != nil {
		b.Fatal(err)
	}
	return bin
}

// tracePMCD is a pmcd run by the benchmark with only the trace PMDA, on
// free loopback ports and in a temporary directory.
type tracePMCD struct {
	dir                 string
	pmcdPort, tracePort int
	cmd                 *exec.Cmd
}

func startTracePMCD(b *testing.B) *tracePMCD {
	conf := pcpConf()
	pmcd := filepath.Join(conf["PCP_BINADM_DIR"], "pmcd")
	agent := filepath.Join(conf["PCP_PMDAS_DIR"], "trace", "pmdatrace")
	for _, p := range []string{pmcd, agent} {
		if _, err := os.Stat(p); err != nil {
			b.Skipf("%s is absent (apt-get install pcp)", p)
		}
	}
	if _, err := exec.LookPath("pminfo"); err != nil {
		b.Skip("pminfo is absent (apt-get install pcp)")
	}
	me, err := user.Current()
	if err != nil {
		b.Fatal(err)
	}
	pm := &tracePMCD{dir: b.TempDir(), pmcdPort: freePort(b), tracePort: freePort(b)}
	for pm.tracePort == pm.pmcdPort {
		pm.tracePort = freePort(b)
	}
	// Numeric PMIDs (domain 10, the PMDA's default) spare the PMNS tools.
	pmns := "root { trace }\ntrace { transact control }\n" +
		"trace.transact { count 10:0:0 }\ntrace.control { port 10:0:14 }\n"
	// The PMDA listens on all IPv4 addresses; -A lets only loopback send.
	agentLine := fmt.Sprintf("trace 10 pipe binary %s -d 10 -I %d -M %s -l %s -A disallow:.* -A allow:127.0.0.1:0\n",
		agent, pm.tracePort, me.Username, pm.path("trace.log"))
	for name, text := range map[string]string{"pmns": pmns, "pmcd.conf": agentLine} {
		if err := os.WriteFile(pm.path(name), []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	pm.cmd = exec.Command(pmcd, "-f", "-A", "-i", "127.0.0.1", "-p", strconv.Itoa(pm.pmcdPort),
		"-s", pm.path("pmcd.socket"), "-c", pm.path("pmcd.conf"), "-n", pm.path("pmns"),
		"-l", pm.path("pmcd.log"), "-x", pm.path("pmcd.err"), "-U", me.Username)
	// Private run, tmp and log directories: nothing of the system's pmcd.
	pm.cmd.Env = append(os.Environ(), "PCP_RUN_DIR="+pm.dir, "PCP_TMP_DIR="+pm.dir, "PCP_LOG_DIR="+pm.dir)
	pm.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the PMDA joins pmcd's group
	if err := pm.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pm.stop)
	b.Cleanup(func() {
		if b.Failed() {
			b.Log(pm.logs())
		}
	})
	want := fmt.Sprintf("value %d", pm.tracePort)
	testutil.Eventually(b, "the trace PMDA to come up", time.Minute, func() bool {
		out, _ := pm.fetch("trace.control.port")
		return strings.Contains(out, want)
	})
	return pm
}

func (pm *tracePMCD) path(name string) string { return filepath.Join(pm.dir, name) }

func (pm *tracePMCD) fetch(metric string) (string, error) {
	out, err := exec.Command("pminfo", "-h", "127.0.0.1:"+strconv.Itoa(pm.pmcdPort), "-f", metric).CombinedOutput()
	return string(out), err
}

// waitCount waits until trace.transact.count for tag is want; more fails
// at once.
func (pm *tracePMCD) waitCount(b *testing.B, tag string, want uint64) {
	re := regexp.MustCompile(`or "` + regexp.QuoteMeta(tag) + `"\] value (\d+)`)
	testutil.Eventually(b, fmt.Sprintf("the trace PMDA to count %d transactions for %q", want, tag), time.Minute, func() bool {
		out, _ := pm.fetch("trace.transact.count")
		m := re.FindStringSubmatch(out)
		if m == nil {
			return false
		}
		got, _ := strconv.ParseUint(m[1], 10, 64)
		if got > want {
			b.Fatalf("the trace PMDA counted %d transactions for %q, want %d:\n%s", got, tag, want, out)
		}
		return got == want
	})
}

func (pm *tracePMCD) logs() string {
	var s strings.Builder
	for _, name := range []string{"pmcd.err", "pmcd.log", "trace.log"} {
		if text, err := os.ReadFile(pm.path(name)); err == nil {
			fmt.Fprintf(&s, "--- %s\n%s", name, text)
		}
	}
	return s.String()
}

// stop ends pmcd (which ends its PMDA), then kills what is left of its
// process group.
func (pm *tracePMCD) stop() {
	done := make(chan error, 1)
	go func() { done <- pm.cmd.Wait() }()
	pm.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		pm.cmd.Process.Kill()
		<-done
	}
	if err := syscall.Kill(-pm.cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		fmt.Fprintln(os.Stderr, "pcptrace: killing pmcd's group:", err)
	}
}

// freePort is a TCP port free on loopback when asked.
func freePort(b *testing.B) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// pcpConf reads PCP's directory settings ($PCP_CONF, else /etc/pcp.conf),
// defaulting to Debian's.
func pcpConf() map[string]string {
	conf := map[string]string{"PCP_BINADM_DIR": "/usr/lib/pcp/bin", "PCP_PMDAS_DIR": "/var/lib/pcp/pmdas"}
	path := os.Getenv("PCP_CONF")
	if path == "" {
		path = "/etc/pcp.conf"
	}
	f, err := os.Open(path)
	if err != nil {
		return conf
	}
	defer f.Close()
	for sc := bufio.NewScanner(f); sc.Scan(); {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok && conf[k] != "" {
			conf[k] = v
		}
	}
	return conf
}
