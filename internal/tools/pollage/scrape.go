package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// The columns of cpuTable whose total row (cpuName "total") sums to
// /proc/stat's "cpu" line, as snmp_exporter names them.
var cpuMetrics = []string{"cpuUser", "cpuNice", "cpuKern", "cpuIdle", "cpuWait", "cpuIrq", "cpuSoftirq", "cpuSteal"}

func scrapeMain(args []string) error {
	fs := flag.NewFlagSet("scrape", flag.ExitOnError)
	exporter := fs.String("exporter", "http://127.0.0.1:9116/snmp", "snmp_exporter's /snmp URL")
	tgt := fs.String("target", "", "the agent the exporter scrapes, HOST:PORT")
	module := fs.String("module", "subagent", "snmp_exporter module")
	auth := fs.String("auth", "public_v2", "snmp_exporter auth")
	gap := fs.Duration("gap", 15*time.Second, "time between the two scrapes of a pair")
	pairs := fs.Int("pairs", 3, "pairs of scrapes")
	rest := fs.Duration("rest", 5*time.Second, "pause between pairs")
	load := fs.Int("load", 0, "start this many `yes` halfway between the two scrapes, stopped after the second")
	name := fs.String("name", "", "name of the run in the output")
	procRoot := fs.String("proc", "/proc", "procfs mount point")
	_ = fs.Parse(args)
	if *tgt == "" || *pairs < 1 {
		fs.Usage()
		os.Exit(2)
	}
	u := *exporter + "?" + url.Values{"target": {*tgt}, "module": {*module}, "auth": {*auth}}.Encode()
	var diffs []float64
	for i := 1; i <= *pairs; i++ {
		if i > 1 {
			time.Sleep(*rest)
		}
		h0, e0, d0, err := scrapeOnce(u, *procRoot)
		if err != nil {
			return err
		}
		at := time.Now()
		var yes []*exec.Cmd
		if *load > 0 {
			time.Sleep(*gap / 2)
			for range *load {
				c := exec.Command("yes")
				c.Stdout = io.Discard // a pipe the runtime drains: yes stays busy
				if err := c.Start(); err != nil {
					return err
				}
				yes = append(yes, c)
			}
		}
		time.Sleep(time.Until(at.Add(*gap)))
		h1, e1, d1, err := scrapeOnce(u, *procRoot)
		for _, c := range yes {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
		if err != nil {
			return err
		}
		host := busy(h0.floats(), h1.floats())
		got := busy(e0, e1)
		diffs = append(diffs, math.Abs(got-host))
		fmt.Printf("%-22s pair %d: busy %6.2f %% from the exporter, %6.2f %% from /proc/stat (difference %+.2f points); scrapes took %.0f and %.0f ms\n",
			*name, i, got, host, got-host, d0.Seconds()*1e3, d1.Seconds()*1e3)
	}
	fmt.Printf("%-22s largest difference over %d pairs: %.2f points\n", *name, *pairs, maxOf(diffs))
	return nil
}

// busy is the percentage of processor time not idle (idle, iowait) between
// a and b, CPU times in the order of cpuTimes.
func busy(a, b [8]float64) float64 {
	var total float64
	for i := range a {
		total += b[i] - a[i]
	}
	idle := b[3] - a[3] + b[4] - a[4]
	return 100 * (total - idle) / total
}

// scrapeOnce reads /proc/stat, then scrapes, and returns both CPU totals
// and the scrape's duration.
func scrapeOnce(u, procRoot string) (host cpuTimes, got [8]float64, took time.Duration, err error) {
	host, _, err = readStat(procRoot)
	if err != nil {
		return
	}
	t0 := time.Now()
	resp, err := http.Get(u)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	took = time.Since(t0)
	if err != nil {
		return
	}
	if resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("scrape: %s: %s", resp.Status, body)
		return
	}
	got, err = totalRow(string(body))
	return
}

// totalRow finds the total row's CPU times in an exposition, as the
// exporter scaled them: busy is a ratio.
func totalRow(body string) ([8]float64, error) {
	var t [8]float64
	seen := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, `cpuName="total"`) {
			continue
		}
		name, _, ok := strings.Cut(line, "{")
		if !ok {
			continue
		}
		for i, m := range cpuMetrics {
			if name != m {
				continue
			}
			f := strings.Fields(line)
			v, err := strconv.ParseFloat(f[len(f)-1], 64)
			if err != nil {
				return t, fmt.Errorf("%s: %w", line, err)
			}
			t[i] = v
			seen[m] = true
		}
	}
	for _, m := range cpuMetrics {
		if !seen[m] {
			return t, fmt.Errorf("no %s{cpuName=\"total\"} in the scrape", m)
		}
	}
	return t, nil
}
