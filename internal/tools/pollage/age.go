package main

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gosnmp/gosnmp"
)

// A target is one front end polled: NAME=HOST:PORT/KIND.
//
//	subagent  the daemon's CPU/total (base.1.0.<1..8>.0) against /proc/stat
//	ucd       net-snmp's own UCD-SNMP-MIB ssCpuRaw* scalars against /proc/stat
//	proc:PID  the daemon's Proc/pid/PID usercpu + syscpu against /proc/PID/stat
type target struct {
	name, addr, kind string
	pid              int
	client           *gosnmp.GoSNMP
	oids             []string
	sumOf            []int // indexes into oids whose values are summed
	refreshAt        int   // index of -refresh's OID in oids; -1: none
	// the proc kind's clock rate: the last reading of the process's ticks
	lastTicks uint64
	lastAt    time.Time
	polls     []poll
	fresh     []poll // -fresh: the second GET of each poll
}

type poll struct {
	age, latency float64 // seconds
	refresh      float64 // the daemon's Agent/refreshms in the answer, seconds; NaN: not asked
}

// ucdRaw are net-snmp's UCD-SNMP-MIB ssCpuRaw* scalars by column.
const ucdRaw = "1.3.6.1.4.1.2021.11."

var ucdCols = []int{50, 51, 52, 53, 54, 55, 56, 61, 64} // user nice system idle wait kernel interrupt softIRQ steal

type targets []*target

func (ts *targets) String() string { return fmt.Sprint(len(*ts)) }

func (ts *targets) Set(s string) error {
	name, rest, ok := strings.Cut(s, "=")
	addr, kind, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 || name == "" {
		return fmt.Errorf("target %q: want NAME=HOST:PORT/KIND", s)
	}
	t := &target{name: name, addr: addr, kind: kind, refreshAt: -1}
	if p, ok := strings.CutPrefix(kind, "proc:"); ok {
		pid, err := strconv.Atoi(p)
		if err != nil || pid <= 0 {
			return fmt.Errorf("target %q: bad pid", s)
		}
		t.kind, t.pid = "proc", pid
	} else if kind != "subagent" && kind != "ucd" {
		return fmt.Errorf("target %q: kind %q is not subagent, ucd or proc:PID", s, kind)
	}
	*ts = append(*ts, t)
	return nil
}

func ageMain(args []string) error {
	fs := flag.NewFlagSet("age", flag.ExitOnError)
	period := fs.Duration("period", 10*time.Second, "polling period; the first poll comes one period after the targets answer")
	n := fs.Int("n", 10, "polls per target")
	fresh := fs.Duration("fresh", 0, "also GET again this long after each poll (values then fresh); 0: no")
	base := fs.String("base", "1.3.6.1.4.1.32473.1", "the daemon's base OID")
	extra := fs.String("extra", "", "comma-separated OIDs also asked in each GET of the daemon (values not checked, but must exist)")
	refresh := fs.String("refresh", "", "OID of the daemon's Agent/refreshms, also asked in each GET of the daemon: the refresh the answer waited for, if any (Agent is read after the host's contexts)")
	community := fs.String("community", "public", "SNMPv2c community")
	procRoot := fs.String("proc", "/proc", "procfs mount point")
	verbose := fs.Bool("v", false, "print every poll on stderr")
	title := fs.String("title", "", "line printed before the results")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: pollage age [flags] NAME=HOST:PORT/{subagent|ucd|proc:PID}...")
		fs.PrintDefaults()
	}
	_ = fs.Parse(args) // ExitOnError
	var ts targets
	for _, a := range fs.Args() {
		if err := ts.Set(a); err != nil {
			return err
		}
	}
	if len(ts) == 0 || *n < 1 || *period <= 0 {
		fs.Usage()
		os.Exit(2)
	}
	var extras []string
	if *extra != "" {
		extras = strings.Split(*extra, ",")
	}
	_, cpus, err := readStat(*procRoot)
	if err != nil {
		return err
	}
	hz := 100 * float64(cpus) // the clock's ticks per second
	for _, t := range ts {
		if err := t.connect(*community); err != nil {
			return err
		}
		defer t.client.Conn.Close()
		if err := t.ready(*base, extras, *refresh, *procRoot, cpus); err != nil {
			return err
		}
	}
	c0, _, _ := readStat(*procRoot)
	t0 := time.Now()
	for k := 1; k <= *n; k++ {
		time.Sleep(time.Until(t0.Add(time.Duration(k) * *period)))
		for _, t := range ts {
			p, err := t.poll(*procRoot, hz)
			if err != nil {
				return fmt.Errorf("%s poll %d: %w", t.name, k, err)
			}
			t.polls = append(t.polls, p)
			if *verbose {
				fmt.Fprintf(os.Stderr, "%s period %v poll %d: age %.3f s, GET %.3f ms\n", t.name, *period, k, p.age, p.latency*1e3)
			}
			if *fresh > 0 {
				time.Sleep(*fresh)
				p, err := t.poll(*procRoot, hz)
				if err != nil {
					return fmt.Errorf("%s poll %d (fresh): %w", t.name, k, err)
				}
				t.fresh = append(t.fresh, p)
				if *verbose {
					fmt.Fprintf(os.Stderr, "%s period %v poll %d again after %v: age %.3f s, GET %.3f ms\n", t.name, *period, k, *fresh, p.age, p.latency*1e3)
				}
			}
		}
	}
	c1, _, _ := readStat(*procRoot)
	rate := float64(c1.sum()-c0.sum()) / time.Since(t0).Seconds()
	if *title != "" {
		fmt.Println(*title)
	}
	fmt.Printf("clock: /proc/stat's CPU times grew %.1f a second over the run, %.4f x 100 x %d processors\n", rate, rate/hz, cpus)
	fmt.Printf("%-24s %8s %5s %12s %12s %12s %12s", "front end", "period", "polls", "age median", "age max", "GET median", "GET p99")
	if *refresh != "" {
		fmt.Printf(" %14s %14s %14s", "refresh median", "GET-refr. med.", "GET-refr. p99")
	}
	fmt.Println()
	row := func(name string, ps []poll) {
		var ages, lats, refr, over []float64
		for _, p := range ps {
			ages = append(ages, p.age)
			lats = append(lats, p.latency*1e3)
			if !math.IsNaN(p.refresh) {
				refr = append(refr, p.refresh*1e3)
				over = append(over, (p.latency-p.refresh)*1e3)
			}
		}
		fmt.Printf("%-24s %8v %5d %10.3f s %10.3f s %9.3f ms %9.3f ms", name, *period, len(ps),
			median(ages), maxOf(ages), median(lats), percentile(lats, 99))
		if *refresh != "" {
			if len(refr) > 0 {
				fmt.Printf(" %11.3f ms %11.3f ms %11.3f ms", median(refr), median(over), percentile(over, 99))
			} else {
				fmt.Printf(" %14s %14s %14s", "-", "-", "-")
			}
		}
		fmt.Println()
	}
	for _, t := range ts {
		if *fresh > 0 {
			row(t.name+" (stale)", t.polls)
			row(t.name+" (fresh)", t.fresh)
		} else {
			row(t.name, t.polls)
		}
	}
	return nil
}

func (t *target) connect(community string) error {
	host, port, err := net.SplitHostPort(t.addr)
	if err != nil {
		return fmt.Errorf("%s: %w", t.name, err)
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return fmt.Errorf("%s: port %q", t.name, port)
	}
	t.client = &gosnmp.GoSNMP{Target: host, Port: uint16(p), Community: community, Version: gosnmp.Version2c,
		Timeout: 5 * time.Second, Retries: 0, MaxOids: 64}
	return t.client.Connect()
}

// ready waits (at most 30 s) until the target serves every OID of its
// kind, then chooses the OIDs summed (ucd: the ssCpuRaw* columns that add
// up to /proc/stat's total, checked against it).
func (t *target) ready(base string, extras []string, refresh, procRoot string, cpus int) error {
	switch t.kind {
	case "subagent":
		for i := 1; i <= 8; i++ {
			t.oids = append(t.oids, fmt.Sprintf("%s.1.0.%d.0", base, i))
			t.sumOf = append(t.sumOf, i-1)
		}
	case "proc":
		t.oids = []string{fmt.Sprintf("%s.10.100.%d.3.0", base, t.pid), fmt.Sprintf("%s.10.100.%d.4.0", base, t.pid)}
		t.sumOf = []int{0, 1}
	case "ucd":
		for _, c := range ucdCols {
			t.oids = append(t.oids, ucdRaw+strconv.Itoa(c)+".0")
		}
	}
	if t.kind != "ucd" {
		t.oids = append(t.oids, extras...)
		if refresh != "" {
			t.refreshAt = len(t.oids)
			t.oids = append(t.oids, refresh)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	var vals []uint64
	var err error
	for {
		vals, err = t.get()
		// net-snmp's first sample of the CPU times comes a few seconds after start.
		if err == nil && (t.kind != "ucd" || vals[0] > 0) {
			break
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = errors.New("ssCpuRawUser still 0")
			}
			return fmt.Errorf("%s (%s) did not serve within 30 s: %w", t.name, t.addr, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	switch t.kind {
	case "ucd":
		return t.chooseUCD(vals, procRoot, cpus)
	case "proc":
		t.lastTicks, err = procTicks(procRoot, t.pid)
		t.lastAt = time.Now()
		return err
	}
	return nil
}

// chooseUCD finds which ssCpuRaw* columns sum to /proc/stat's total:
// ssCpuRawSystem holds either system alone (interrupt and softIRQ then
// count apart) or system + irq + softirq; ssCpuRawKernel is left out either
// way. The sum must then be behind /proc/stat by a plausible cache age.
func (t *target) chooseUCD(vals []uint64, procRoot string, cpus int) error {
	st, _, err := readStat(procRoot)
	if err != nil {
		return err
	}
	v := map[int]uint64{}
	for i, c := range ucdCols {
		v[c] = vals[i]
	}
	absd := func(a, b uint64) uint64 {
		if a > b {
			return a - b
		}
		return b - a
	}
	sys, irq, soft := st[2], st[5], st[6]
	cols := []int{50, 51, 52, 53, 54, 64}
	how := "ssCpuRawSystem = system + irq + softirq"
	if absd(v[52], sys) < absd(v[52], sys+irq+soft) {
		cols = []int{50, 51, 52, 53, 54, 56, 61, 64}
		how = "ssCpuRawSystem = system; ssCpuRawInterrupt and ssCpuRawSoftIRQ apart"
	}
	var sum uint64
	for _, c := range cols {
		sum += v[c]
	}
	behind := (float64(st.sum()) - float64(sum)) / (100 * float64(cpus))
	fmt.Printf("%s: ssCpuRaw columns %v sum to the total (%s): %d against /proc/stat's %d now (%.2f s behind; system %d/%d, irq %d/%d, softirq %d/%d, kernel %d)\n",
		t.name, cols, how, sum, st.sum(), behind, v[52], sys, v[56], irq, v[61], soft, v[55])
	if behind < -0.1 || behind > 30 {
		return fmt.Errorf("%s: ssCpuRaw sum is %.2f s away from /proc/stat's total; not the same clock", t.name, behind)
	}
	t.sumOf = t.sumOf[:0]
	for i, c := range ucdCols {
		for _, want := range cols {
			if c == want {
				t.sumOf = append(t.sumOf, i)
			}
		}
	}
	return nil
}

// get asks for the target's OIDs and returns their values as integers
// (0 for a value that is not one).
func (t *target) get() ([]uint64, error) {
	r, err := t.client.Get(t.oids)
	if err != nil {
		return nil, err
	}
	if r.Error != gosnmp.NoError {
		return nil, fmt.Errorf("error status %v at %d", r.Error, r.ErrorIndex)
	}
	if len(r.Variables) != len(t.oids) {
		return nil, fmt.Errorf("%d varbinds for %d OIDs", len(r.Variables), len(t.oids))
	}
	out := make([]uint64, len(t.oids))
	for i, v := range r.Variables {
		switch v.Type {
		case gosnmp.NoSuchObject, gosnmp.NoSuchInstance, gosnmp.EndOfMibView:
			return nil, fmt.Errorf("%s: %v", t.oids[i], v.Type)
		case gosnmp.Counter32, gosnmp.Counter64, gosnmp.Gauge32, gosnmp.Integer, gosnmp.Uinteger32, gosnmp.TimeTicks:
			out[i] = gosnmp.ToBigInt(v.Value).Uint64()
		}
	}
	return out, nil
}

// poll reads the clock, sends the GET and works out the age of what came
// back and the GET's latency.
func (t *target) poll(procRoot string, hz float64) (poll, error) {
	var clock uint64
	var rate float64
	var err error
	if t.kind == "proc" {
		clock, err = procTicks(procRoot, t.pid)
		now := time.Now()
		rate = float64(clock-t.lastTicks) / now.Sub(t.lastAt).Seconds()
		t.lastTicks, t.lastAt = clock, now
	} else {
		var st cpuTimes
		st, _, err = readStat(procRoot)
		clock, rate = st.sum(), hz
	}
	if err != nil {
		return poll{}, err
	}
	sent := time.Now()
	vals, err := t.get()
	lat := time.Since(sent).Seconds()
	if err != nil {
		return poll{}, err
	}
	var served uint64
	for _, i := range t.sumOf {
		served += vals[i]
	}
	p := poll{age: math.NaN(), latency: lat, refresh: math.NaN()}
	if t.refreshAt >= 0 {
		p.refresh = float64(vals[t.refreshAt]) / 1e6 // milliseconds with 3 decimals (DISPLAY-HINT d-3)
	}
	if rate > 0 {
		p.age = (float64(clock) - float64(served)) / rate
	}
	return p, nil
}
