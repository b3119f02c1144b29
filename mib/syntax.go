package mib

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/spmi"
)

// indexSyntax is the SYNTAX of the index object of c's table: the rows'
// numbers. spmi numbers instances from 1 (and PIDs, ifindexes and cpuN+1
// start at 1; the aggregate CPU/total, numbered 0, is no row), but a DDS
// supplier numbers its contexts itself and may use 0.
func (c *class) indexSyntax() string {
	if len(c.key) > 0 && c.key[0] == spmi.ASNDDS {
		return "Unsigned32 (0..4294967295)"
	}
	for _, r := range c.rows {
		if r.it.Rel[len(r.it.Rel)-1] == 0 {
			return "Unsigned32 (0..4294967295)"
		}
	}
	return "Unsigned32 (1..4294967295)"
}

// scaled writes v with scale decimal places: (12345, 2) -> "123.45".
func scaled(v int64, scale uint8) string {
	return strconv.FormatFloat(float64(v)/math.Pow10(int(scale)), 'f', int(scale), 64)
}

// places says "1 decimal place", "2 decimal places".
func places(scale uint8) string {
	if scale == 1 {
		return "1 decimal place"
	}
	return strconv.Itoa(int(scale)) + " decimal places"
}

// statDescription is the DESCRIPTION of a statistic: what it is, where it
// lives, how it counts and scales, and its default scale range.
func statDescription(path string, d *spmiwire.StatDesc) string {
	var b strings.Builder
	descr := d.Descr
	if descr == "" {
		descr = d.Name
	}
	fmt.Fprintf(&b, "%s (%s). %s", sentence(descr), path, kindSentence(d))
	if d.Data != spmiwire.SiText && d.Form == spmiwire.FormNumber {
		b.WriteString(" " + scaleRange(d))
	}
	b.WriteString(" Absent (no instance, no cell) while it has no value: its source could not be read " +
		"or does not have it on this host (docs/TREE.md, Sources).")
	return b.String()
}

// kindSentence says how the value behaves and how it is encoded.
func kindSentence(d *spmiwire.StatDesc) string {
	var b strings.Builder
	switch {
	case d.Form == spmiwire.FormBool:
		return "A truth value: true(1) or false(2) (the SPMI view and subagent get show 1 and 0)."
	case d.Form == spmiwire.FormTime:
		return "A moment, in UTC (the SPMI view and subagent get show it in seconds since 1970)."
	case d.Data == spmiwire.SiText:
		return "Text."
	case d.Val == ddswire.SiCounter:
		b.WriteString("A counter: it only increases; managers show its change per second.")
	case d.Min < 0:
		b.WriteString("A level that can be negative.")
	case d.Wide:
		b.WriteString("A level that can exceed 32 bits, served as CounterBasedGauge64 (RFC 2856) on the Counter64 wire type.")
	default:
		b.WriteString("A level.")
	}
	if d.Scale > 0 {
		u := ""
		if d.Units != "" {
			u = " " + d.Units
		}
		fmt.Fprintf(&b, " Served times 1%s (%s): 12345 stands for %s%s.",
			strings.Repeat("0", int(d.Scale)), places(d.Scale), scaled(12345, d.Scale), u)
	}
	return b.String()
}

// scaleRange states the default scale (the guide's low and high values).
func scaleRange(d *spmiwire.StatDesc) string {
	u := ""
	if d.Units != "" {
		u = " " + d.Units
	}
	if d.Val == ddswire.SiCounter {
		if u == "" {
			u = " events"
		}
		u += " per second"
	}
	return fmt.Sprintf("Default scale: %d to %d%s.", d.Min, d.Max, u)
}

// sentence capitalizes the first letter and drops trailing periods, so
// that the caller can go on with " (path).".
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return s
	}
	if c := s[0]; c >= 'a' && c <= 'z' {
		s = string(c-'a'+'A') + s[1:]
	}
	return strings.TrimRight(s, ".")
}
