package main

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// cpuTimes are the eight CPU times of /proc/stat's "cpu" line, in 1/100 s:
// user, nice, system, idle, iowait, irq, softirq, steal (guest time is
// already in user and nice).
type cpuTimes [8]uint64

func (c cpuTimes) sum() uint64 {
	var s uint64
	for _, v := range c {
		s += v
	}
	return s
}

func (c cpuTimes) floats() [8]float64 {
	var f [8]float64
	for i, v := range c {
		f[i] = float64(v)
	}
	return f
}

// readStat reads the host's CPU times and counts its processors.
func readStat(procRoot string) (cpuTimes, int, error) {
	var t cpuTimes
	b, err := os.ReadFile(filepath.Join(procRoot, "stat"))
	if err != nil {
		return t, 0, err
	}
	cpus := 0
	found := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || !strings.HasPrefix(f[0], "cpu") {
			continue
		}
		if f[0] != "cpu" {
			cpus++
			continue
		}
		if len(f) < 9 {
			return t, 0, fmt.Errorf("/proc/stat: cpu line has %d fields", len(f))
		}
		for i := range t {
			if t[i], err = strconv.ParseUint(f[i+1], 10, 64); err != nil {
				return t, 0, fmt.Errorf("/proc/stat: %w", err)
			}
		}
		found = true
	}
	if !found || cpus == 0 {
		return t, 0, fmt.Errorf("/proc/stat: no cpu lines")
	}
	return t, cpus, nil
}

// procTicks is a process's CPU time (utime + stime) in 1/100 s.
func procTicks(procRoot string, pid int) (uint64, error) {
	b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, err
	}
	// Fields are counted after the ")" that ends the command name.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	u, err1 := strconv.ParseUint(f[11], 10, 64)
	s, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: bad utime/stime %q %q", pid, f[11], f[12])
	}
	return u + s, nil
}

// median of xs (the mean of the middle two for an even count).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Sorted(slices.Values(xs))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// percentile p of xs by nearest rank: below 100 samples p99 is the max.
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Sorted(slices.Values(xs))
	k := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[min(max(k, 0), len(s)-1)]
}

func maxOf(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return slices.Max(xs)
}
