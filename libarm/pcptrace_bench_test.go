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
				b.Fatalf("%v\n%s", err, pm.logs())
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
		err = pm.waitCount(tag, uint64(b.N)+1) // +1: the untimed first pair
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
	want := fmt.Sprintf("value %d", pm.tracePort)
	for end := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if out, _ := pm.fetch("trace.control.port"); strings.Contains(out, want) {
			return pm
		}
		if time.Now().After(end) {
			b.Fatalf("the trace PMDA did not come up in 15 s\n%s", pm.logs())
		}
	}
}

func (pm *tracePMCD) path(name string) string { return filepath.Join(pm.dir, name) }

func (pm *tracePMCD) fetch(metric string) (string, error) {
	out, err := exec.Command("pminfo", "-h", "127.0.0.1:"+strconv.Itoa(pm.pmcdPort), "-f", metric).CombinedOutput()
	return string(out), err
}

// waitCount polls trace.transact.count for tag until it is want, within
// 10 s.
func (pm *tracePMCD) waitCount(tag string, want uint64) error {
	re := regexp.MustCompile(`or "` + regexp.QuoteMeta(tag) + `"\] value (\d+)`)
	var out string
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		out, _ = pm.fetch("trace.transact.count")
		if m := re.FindStringSubmatch(out); m != nil {
			if got, _ := strconv.ParseUint(m[1], 10, 64); got == want {
				return nil
			} else if got > want {
				break
			}
		}
	}
	return fmt.Errorf("the trace PMDA did not count %d transactions for %q:\n%s", want, tag, out)
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
