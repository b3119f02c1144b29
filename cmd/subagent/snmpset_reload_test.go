package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// SIGHUP reloads, each adding or removing a configured hotset, run while
// 1,000 SETs through the real snmpd create and destroy hotset rows: every
// SET does what it asks, and afterwards every row hotsetDefTable shows
// active is a hotset the daemon serves under Hotset/, and no other is
// served. (daemon.TestReloadDuringSets drives the same race faster,
// without snmpd, and checks after every SET.)
func TestSNMPSetDuringReloads(t *testing.T) {
	s := writableSnmpd(t, "")
	e := newEnv(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "subagent.yaml")
	plain := "hotset:\n  interval: 1s\n  tree_changed_interval: 0\n"
	withConf := plain + "hotsets:\n  - {name: conf, stat: Disk/*/qlen, maxresp: 1, feed_type: always}\n"
	write := func(yaml string) {
		tmp := filepath.Join(dir, "next.yaml")
		if err := os.WriteFile(tmp, []byte(yaml), 0o600); err != nil {
			t.Error(err)
			return
		}
		if err := os.Rename(tmp, file); err != nil { // never half a file
			t.Error(err)
		}
	}
	write(plain)
	e.start("--config", file, "--agentx", s.AgentXAddress)
	waitServed(t, s, idleOID, 10*time.Second)

	stop, stopped := make(chan struct{}), make(chan int)
	go func() {
		n := 0
		defer func() { stopped <- n }()
		for ; n < 10000; n++ {
			select {
			case <-stop:
				return
			default:
			}
			write([]string{withConf, plain}[n%2])
			before := strings.Count(e.daemonLog.String(), "hotsets reloaded")
			if err := e.daemon.Process.Signal(syscall.SIGHUP); err != nil {
				t.Errorf("SIGHUP: %v", err)
				return
			}
			// Paced by the daemon: the next once this one is applied.
			for deadline := time.Now().Add(10 * time.Second); strings.Count(e.daemonLog.String(), "hotsets reloaded") == before; time.Sleep(5 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Errorf("reload %d not applied within 10s", n)
					return
				}
			}
		}
	}()

	pool := []string{"conf"}
	for i := range 8 {
		pool = append(pool, fmt.Sprintf("row%d", i))
	}
	exists := map[string]bool{}
	for i := 0; i < 1000; i++ {
		name := pool[1+i*5%8]                        // every row in turn
		args := []string{hotCol(11, name), "i", "6"} // destroy
		if !exists[name] {
			args = []string{
				hotCol(2, name), "s", "Disk/*/busy",
				hotCol(3, name), "i", "1",
				hotCol(6, name), "i", "3", // feed always
				hotCol(7, name), "i", "1", // excp none
				hotCol(10, name), "i", "2", // volatile
				hotCol(11, name), "i", "4", // createAndGo
			}
		}
		if out, err := snmpset(s, writerOpts, args...); err != nil {
			t.Fatalf("SET %d (%s exists: %v): %v\n%s", i, name, exists[name], err, out)
		}
		exists[name] = !exists[name]
	}
	close(stop)
	reloads := <-stopped
	t.Logf("1000 SETs during %d reloads", reloads)
	if reloads < 2 {
		t.Fatalf("only %d reloads during the SETs", reloads)
	}

	// The table's view and the tree are rebuilt within seconds: wait for
	// them to agree, bounded.
	var active, served []string
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		active, served = nil, nil
		for _, name := range pool {
			if statusOf(t, s, name) == "1" {
				active = append(active, name)
			}
			if _, ok := rtlGet(e, "Hotset/"+name+"/maxresp"); ok {
				served = append(served, name)
			}
		}
		if slices.Equal(active, served) || time.Now().After(deadline) {
			break
		}
	}
	if !slices.Equal(active, served) {
		t.Errorf("hotsetDefTable's active rows %v, but the daemon serves the hotsets %v", active, served)
	}
	var want []string
	for _, name := range pool[1:] {
		if exists[name] {
			want = append(want, name)
		}
	}
	if got := slices.DeleteFunc(slices.Clone(active), func(n string) bool { return n == "conf" }); !slices.Equal(got, want) {
		t.Errorf("rows created over SNMP and active: %v, want %v", got, want)
	}
}
