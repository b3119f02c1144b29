package snmpdtest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	out := `.1.3.6.1.2.1.1.3.0 = Timeticks: (151) 0:00:01.51
.1.3.6.1.2.1.1.5.0 = STRING: "vm"
.1.3.6.1.4.1.32473.1.1.0 = Counter64: 1099511627776
.1.3.6.1.4.1.32473.1.3.0 = INTEGER: -7
.1.3.6.1.2.1.1.2.0 = OID: .1.3.6.1.4.1.8072.3.2.10
.1.3.6.1.4.1.32473.1.9.0 = STRING: "two
lines"
.1.3.6.1.4.1.32473.1.8.0 = ""
.1.3.6.1.4.1.32473.1.7.0 = No Such Instance currently exists at this OID
.1.3.6.1.4.1.32473.9 = No Such Object available on this agent at this OID
.1.3.6.1.4.1.32473.1.20.1.3.3 = No more variables left in this MIB View (It is past the end of the MIB tree)
`
	got, err := Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	want := []Var{
		{"1.3.6.1.2.1.1.3.0", "Timeticks", "151"},
		{"1.3.6.1.2.1.1.5.0", "STRING", "vm"},
		{"1.3.6.1.4.1.32473.1.1.0", "Counter64", "1099511627776"},
		{"1.3.6.1.4.1.32473.1.3.0", "INTEGER", "-7"},
		{"1.3.6.1.2.1.1.2.0", "OID", "1.3.6.1.4.1.8072.3.2.10"},
		{"1.3.6.1.4.1.32473.1.9.0", "STRING", "two\nlines"},
		{"1.3.6.1.4.1.32473.1.8.0", "", ""},
		{"1.3.6.1.4.1.32473.1.7.0", "noSuchInstance", ""},
		{"1.3.6.1.4.1.32473.9", "noSuchObject", ""},
		{"1.3.6.1.4.1.32473.1.20.1.3.3", "endOfMibView", ""},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Parse:\n%q\nwant\n%q", got, want)
	}
	if _, err := Parse("Timeout: No Response from udp:127.0.0.1:1\n"); err == nil {
		t.Error("Parse accepted an error message")
	}
}

func TestSnmpdStartRestartStop(t *testing.T) {
	s := Start(t, Options{})
	vars, err := s.Get("1.3.6.1.2.1.1.3.0")
	if err != nil {
		t.Fatal(err)
	}
	if len(vars) != 1 || vars[0].Type != "Timeticks" {
		t.Fatalf("sysUpTime.0: %v", vars)
	}
	if _, err := strconv.ParseUint(vars[0].Value, 10, 32); err != nil {
		t.Errorf("sysUpTime.0 value %q is not a tick count", vars[0].Value)
	}
	walk, err := s.Walk("1.3.6.1.2.1.1")
	if err != nil || len(walk) < 5 {
		t.Fatalf("walk of system: %v %v", walk, err)
	}
	for _, v := range walk {
		if !strings.HasPrefix(v.OID, "1.3.6.1.2.1.1.") {
			t.Errorf("walk of system left it: %v", v)
		}
	}
	// The AgentX socket carries the permissions we configured.
	if fi, err := os.Stat(s.AgentXPath); err != nil || fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o700 {
		t.Errorf("AgentX socket %s: %v %v", s.AgentXPath, fi.Mode(), err)
	}

	s.Restart()
	if !s.Running() {
		t.Fatal("not running after Restart")
	}
	if vars, err := s.Get("1.3.6.1.2.1.1.5.0"); err != nil || len(vars) != 1 || vars[0].Type != "STRING" {
		t.Fatalf("after restart: %v %v", vars, err)
	}

	s.Stop()
	if s.Running() {
		t.Fatal("running after Stop")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, _, err := s.Cmd(ctx, s.Tools.Snmpget, []string{"-t", "0.2", "-r", "0"}, "1.3.6.1.2.1.1.3.0"); err == nil {
		t.Error("a stopped snmpd answered")
	}
	// Persistent state went to the test's directory, not /var/lib/snmp.
	if _, err := os.Stat(filepath.Join(s.Dir, "var", "snmpd.conf")); err != nil {
		t.Errorf("no persistent file in the test directory: %v", err)
	}
}

func TestTrapdReceivesAgentxtrap(t *testing.T) {
	d := StartTrapd(t)
	s := Start(t, Options{TrapSink: d.Addr})
	ctx, cancel := context.WithTimeout(context.Background(), ToolTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.Tools.Agentxtrap, "-x", s.AgentXAddress,
		"1.3.6.1.4.1.32473.2.0.77", "1.3.6.1.4.1.32473.1.4.0", "s", "from agentxtrap")
	cmd.Env = env(filepath.Join(s.Dir, "var"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("agentxtrap: %v: %s", err, out)
	}
	log, err := d.WaitFor(10*time.Second, ".1.3.6.1.4.1.32473.2.0.77")
	if err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	if !strings.Contains(log, `"from agentxtrap"`) {
		t.Errorf("trap without its varbind:\n%s", log)
	}
}

// socketInodes returns the inodes of the sockets process pid holds.
func socketInodes(t *testing.T, pid int) map[string]bool {
	t.Helper()
	dir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	fds, err := os.ReadDir(dir)
	if err != nil {
		t.Skipf("cannot inspect %s: %v", dir, err)
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		link, err := os.Readlink(filepath.Join(dir, fd.Name()))
		if ino, ok := strings.CutPrefix(link, "socket:["); err == nil && ok {
			inodes[strings.TrimSuffix(ino, "]")] = true
		}
	}
	return inodes
}

// The daemons must listen on loopback only (rule for network tests): no
// SMUX on 0.0.0.0:199, no default UDP 161.
func TestDaemonsListenOnLoopbackOnly(t *testing.T) {
	d := StartTrapd(t)
	s := Start(t, Options{AgentXTCP: true, TrapSink: d.Addr})
	loopback := map[string]bool{"0100007F": true, "00000000000000000000000001000000": true}
	for name, pid := range map[string]int{"snmpd": s.p.cmd.Process.Pid, "snmptrapd": d.p.cmd.Process.Pid} {
		inodes := socketInodes(t, pid)
		found := 0
		for _, table := range []string{"tcp", "tcp6", "udp", "udp6"} {
			data, err := os.ReadFile("/proc/net/" + table)
			if err != nil {
				continue
			}
			for _, line := range strings.Split(string(data), "\n")[1:] {
				f := strings.Fields(line)
				if len(f) < 10 || !inodes[f[9]] {
					continue
				}
				found++
				if host, _, _ := strings.Cut(f[1], ":"); !loopback[host] {
					t.Errorf("%s has a %s socket on %s, not loopback", name, table, f[1])
				}
			}
		}
		if found == 0 {
			t.Errorf("found no inet socket of %s (pid %d): the check saw nothing", name, pid)
		}
	}
}
