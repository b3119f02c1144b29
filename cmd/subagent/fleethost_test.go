package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/internal/snmpdtest"
)

// fleetHost is one host of the fleet test: its own daemon (standalone
// responder on its own loopback address, run and state directories) over
// its own copy of the fixture host, whose CPU, disk and network counters
// move at rates of its own.
type fleetHost struct {
	e    *env
	addr string
	n    int // 0, 1, ...: the rates grow with it
}

// The rates fleetHost n's counters move at, per second: every processor
// spends 10+n ticks (1/100 s) in user mode, 5 in the kernel and the rest
// of its 100 idle; sda reads 2000(n+1) sectors and is busy 5(n+1) %;
// eth0 receives 10000(n+1) bytes.
func (h *fleetHost) userTicks() float64 { return float64(10 + h.n) }
func (h *fleetHost) busyPercent() float64 {
	return h.userTicks() + 5
}
func (h *fleetHost) diskBusy() float64    { return float64(5 * (h.n + 1)) }
func (h *fleetHost) diskSectors() float64 { return float64(2000 * (h.n + 1)) }
func (h *fleetHost) lanBytes() float64    { return float64(10000 * (h.n + 1)) }

// The SNMPv3 user of deploy/prometheus/snmp-auths.yml.
const fleetV3Users = `  users:
    - user: monitor
      auth_protocol: SHA256
      auth_password: change-this-auth-passphrase
      priv_protocol: AES
      priv_password: change-this-priv-passphrase
      security_level: authPriv
`

// startFleetHost starts host n on 127.0.0.(10+n). v3 turns SNMPv1/v2c off
// and gives the host snmp-auths.yml's SNMPv3 user instead. Every host
// measures RTime/LAN to 127.0.0.1 each second. Two Prometheus walk each
// host (the single one and a shard), the second perhaps within min_age of
// the first, which then gets values up to min_age old: 300 ms (not the
// shipped 1 s) keeps that under 1 % of the rate window.
func startFleetHost(t *testing.T, n int, v3 bool) *fleetHost {
	t.Helper()
	e := newEnv(t)
	proc := filepath.Join(t.TempDir(), "proc")
	testutil.CopyTree(t, e.proc, proc)
	e.proc = proc
	cfg := "refresh:\n  min_age: 300ms\nrtime_lan:\n  interval: 1s\n  timeout: 500ms\n  hosts: [127.0.0.1]\n"
	if v3 {
		cfg += "snmp:\n  community: \"\"\n" + fleetV3Users
	}
	file := filepath.Join(t.TempDir(), "subagent.yaml")
	if err := os.WriteFile(file, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	h := &fleetHost{e: e, addr: fmt.Sprintf("127.0.0.%d:%d", 10+n, snmpdtest.FreeUDPPort(t)), n: n}
	e.start("--config", file, "--listen", h.addr)
	return h
}

// moveCounters rewrites every host's /proc/stat, /proc/diskstats and
// /proc/net/dev every 100 ms until the test ends, their counters the
// fixture's plus the host's rates times the time since start. A reader
// sees a value as old as the longest gap between two rewrites, which the
// returned function tells (100 ms, more when the machine is loaded).
func moveCounters(t *testing.T, hosts []*fleetHost) func() time.Duration {
	t.Helper()
	type file struct {
		path string
		orig []string
	}
	read := func(h *fleetHost, name string) file {
		p := filepath.Join(h.e.proc, name)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return file{p, strings.Split(string(b), "\n")}
	}
	type hostFiles struct {
		h                *fleetHost
		stat, disks, net file
	}
	var all []hostFiles
	for _, h := range hosts {
		all = append(all, hostFiles{h, read(h, "stat"), read(h, "diskstats"), read(h, "net/dev")})
	}
	start := time.Now()
	var mu sync.Mutex
	last, gap := start, time.Duration(0)
	write := func() {
		mu.Lock()
		if d := time.Since(last); d > gap {
			gap = d
		}
		last = time.Now()
		mu.Unlock()
		secs := time.Since(start).Seconds()
		for _, hf := range all {
			h := hf.h
			ncpu := 0
			for _, l := range hf.stat.orig {
				if strings.HasPrefix(l, "cpu") && !strings.HasPrefix(l, "cpu ") {
					ncpu++
				}
			}
			stat := bump(hf.stat.orig, func(f []string) map[int]float64 {
				k := 1.0
				switch {
				case f[0] == "cpu":
					k = float64(ncpu)
				case !strings.HasPrefix(f[0], "cpu"):
					return nil
				}
				// user, system, idle (fields 1, 3, 4)
				return map[int]float64{1: k * h.userTicks(), 3: k * 5, 4: k * (100 - h.busyPercent())}
			}, secs)
			disks := bump(hf.disks.orig, func(f []string) map[int]float64 {
				if len(f) > 12 && f[2] == "sda" {
					// sectors read (5), ms doing I/O (12)
					return map[int]float64{5: h.diskSectors(), 12: 10 * h.diskBusy()}
				}
				return nil
			}, secs)
			net := bump(hf.net.orig, func(f []string) map[int]float64 {
				if len(f) > 1 && f[0] == "eth0:" {
					return map[int]float64{1: h.lanBytes()}
				}
				return nil
			}, secs)
			for _, w := range []struct {
				f     file
				lines []string
			}{{hf.stat, stat}, {hf.disks, disks}, {hf.net, net}} {
				tmp := w.f.path + ".new"
				if err := os.WriteFile(tmp, []byte(strings.Join(w.lines, "\n")), 0o644); err == nil {
					os.Rename(tmp, w.f.path)
				}
			}
		}
	}
	write()
	every(t, 100*time.Millisecond, write, func() {})
	return func() time.Duration {
		mu.Lock()
		defer mu.Unlock()
		return gap
	}
}

// bump returns lines with the fields rates names (index -> per second)
// advanced by rate*secs; lines keep their fields, single-spaced.
func bump(lines []string, rates func([]string) map[int]float64, secs float64) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		f := strings.Fields(l)
		r := map[int]float64(nil)
		if len(f) > 0 {
			r = rates(f)
		}
		if r == nil {
			out[i] = l
			continue
		}
		for idx, per := range r {
			v, err := strconv.ParseUint(f[idx], 10, 64)
			if err == nil {
				f[idx] = strconv.FormatUint(v+uint64(per*secs), 10)
			}
		}
		out[i] = strings.Join(f, " ")
	}
	return out
}

// getRates runs `subagent get --interval` on every host at once and
// returns each host's rates (the number `get` prints before % or /s).
func getRates(t *testing.T, hosts []*fleetHost, interval time.Duration, paths ...string) []map[string]float64 {
	t.Helper()
	out := make([]map[string]float64, len(hosts))
	var wg sync.WaitGroup
	for i, h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stdout, stderr, code := h.e.run(append([]string{"get", "--interval", interval.String(), "--count", "1"}, h.e.args(paths...)...)...)
			rows := strings.Split(strings.TrimSpace(stdout), "\n")
			if code != 0 || len(rows) != 2 {
				t.Errorf("host %d: get --interval: exit %d %s\n%s", i, code, stderr, stdout)
				return
			}
			f := strings.Fields(rows[1])
			m := map[string]float64{}
			for j, p := range paths {
				if 1+j < len(f) {
					v, err := strconv.ParseFloat(strings.TrimRight(f[1+j], "%/s"), 64)
					if err == nil {
						m[p] = v
					}
				}
			}
			out[i] = m
		}()
	}
	wg.Wait()
	return out
}
