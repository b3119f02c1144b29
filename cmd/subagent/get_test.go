package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/perfagent/subagent/client/consumer"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/client/spmiwire"
)

// get labels each statistic by its real value type, and --interval shows
// times in 1/100 s as percent, with full paths in the header.
func TestGetLabelsPercentAndFullPathsOnFixture(t *testing.T) {
	e := newEnv(t)
	out, stderr, code := e.run(append([]string{"get", "FS/root/mount", "CPU/cpu0/idle", "Mem/Real/%free", "Proc/pswitch", "Disk/sda/busy"}, e.args()...)...)
	if code != 0 {
		t.Fatalf("get: exit %d %s", code, stderr)
	}
	for _, want := range []string{
		`(?m)^FS/root/mount\s+/\s+text$`,
		`(?m)^CPU/cpu0/idle\s+\d+\s+counter, 1/100 s \(rate: percent of time\)$`,
		`(?m)^Disk/sda/busy\s+\d+\s+counter, 1/100 s \(rate: percent of time\)$`,
		`(?m)^Mem/Real/%free\s+\d+\.\d\d\s+quantity, float, percent$`,
		`(?m)^Proc/pswitch\s+\d+\s+counter, switches$`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("get output does not match %s:\n%s", want, out)
		}
	}

	paths := []string{"CPU/cpu0/idle", "Disk/sda/busy", "Proc/pswitch", "Proc/pid/1/name", "Mem/Real/%free"}
	out, stderr, code = e.run(append([]string{"get", "--interval", "300ms", "--count", "2"}, e.args(paths...)...)...)
	rows := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(rows) != 3 {
		t.Fatalf("get --interval: exit %d\n%s%s", code, out, stderr)
	}
	if h := strings.Fields(rows[0]); strings.Join(h, " ") != "time "+strings.Join(paths, " ") {
		t.Errorf("header %q, want the full paths", rows[0])
	}
	for _, r := range rows[1:] {
		f := strings.Fields(r)
		if len(f) != 6 || !strings.HasSuffix(f[1], "%") || !strings.HasSuffix(f[2], "%") || !strings.HasSuffix(f[3], "/s") || f[4] != "systemd" {
			t.Errorf("row %q: want CPU time and disk busy in %%, pswitch per second, the name as text", r)
		}
	}
}

// A text statistic declared without a value type (ARM's detail) is text,
// in both forms of get; a counter's rate is never shown for it.
func TestTextStatisticsAreLabelledText(t *testing.T) {
	detail := &spmiwire.StatDesc{Name: "detail", Data: spmiwire.SiText} // Val is SiCounter, the zero value
	if got := describe(detail); got != "text" {
		t.Errorf("describe = %q, want text", got)
	}
	v := consumer.StatValue{Item: spmiwire.Item{Path: "RTime/ARM/app/tran/detail", Stat: detail, Value: spmiwire.Text("ok")}}
	if got := rateText(v); got != "ok" {
		t.Errorf("rateText = %q, want the text", got)
	}
	var out bytes.Buffer
	if err := printOnce(&out, consumer.Reading{Values: []consumer.StatValue{v}}); err != nil || !regexp.MustCompile(`detail\s+ok\s+text\n$`).MatchString(out.String()) {
		t.Errorf("printOnce: %v %q", err, out.String())
	}
	busy := &spmiwire.StatDesc{Name: "busy", Val: ddswire.SiCounter, Units: "1/100 s"}
	if got := rateText(consumer.StatValue{Item: spmiwire.Item{Stat: busy, Value: spmiwire.Uint(9)}, Rate: 42.5, HasRate: true}); got != "42.50%" {
		t.Errorf("disk busy rate %q, want 42.50%%", got)
	}
	ms := &spmiwire.StatDesc{Name: "rtime", Val: ddswire.SiCounter, Units: "ms"}
	if got := rateText(consumer.StatValue{Item: spmiwire.Item{Stat: ms, Value: spmiwire.Uint(9)}, Rate: 3, HasRate: true}); got != "3.00/s" {
		t.Errorf("milliseconds counter rate %q, want 3.00/s", got)
	}
}

// A statistic the daemon marks not measured yet (an RTime/LAN host before
// its first reply) is said so, with the daemon's reason, and is not a
// failure; a failed source still is, whatever its path.
func TestNotMeasuredYetIsNotAFailure(t *testing.T) {
	resp := &spmiwire.StatDesc{Name: "resptime", Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 3}
	noValue := &spmierr.Error{Code: spmierr.SiNoValue, Msg: "no value"}
	why := &spmierr.Error{Code: spmierr.SiNoValue, Msg: "not measured yet: cannot resolve nohost.invalid: no such host"}
	var out bytes.Buffer
	err := printOnce(&out, consumer.Reading{Values: []consumer.StatValue{{Item: spmiwire.Item{Path: "RTime/LAN/nohost.invalid/resptime", Stat: resp, Err: why, NotYet: true}}}})
	if err != nil || !strings.Contains(out.String(), "RTime/LAN/nohost.invalid/resptime  -  not measured yet: cannot resolve nohost.invalid: no such host") {
		t.Errorf("not measured: %v %q", err, out.String())
	}
	out.Reset()
	for _, path := range []string{"Disk/sda/busy", "RTime/LAN/nohost.invalid/resptime"} {
		out.Reset()
		err = printOnce(&out, consumer.Reading{Values: []consumer.StatValue{{Item: spmiwire.Item{Path: path, Stat: resp, Err: noValue}}}})
		if err == nil {
			t.Errorf("%s: a source that could not be read is not a failure: %q", path, out.String())
		}
	}
}
