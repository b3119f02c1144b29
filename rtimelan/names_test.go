package rtimelan

import (
	"context"
	"strings"
	"testing"

	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/spmi"
)

func TestIPv6LiteralsHaveOneSpelling(t *testing.T) {
	for in, want := range map[string]string{
		"::1": "::1", "[::1]": "::1", "0:0:0:0:0:0:0:1": "::1", "[0::1]": "::1", " ::1 ": "::1",
		"::ffff:127.0.0.1": "127.0.0.1", "127.0.0.1": "127.0.0.1", "[fe80::1%eth0]": "fe80::1%eth0",
		"2001:DB8::A": "2001:db8::a", "farvel": "farvel", "[farvel]": "[farvel]", "gw.example.org": "gw.example.org",
	} {
		if got := CanonicalHost(in); got != want {
			t.Errorf("CanonicalHost(%q) = %q, want %q", in, got, want)
		}
		if in != "[farvel]" && CheckHost(in) != nil {
			t.Errorf("CheckHost(%q): %v", in, CheckHost(in))
		}
	}
	if CheckHost("[farvel]") == nil || CheckHost("[::1") == nil {
		t.Error("brackets around a name, or unbalanced, accepted")
	}
	for in, want := range map[string]string{
		"RTime/LAN/[::1]/resptime":      "RTime/LAN/::1/resptime",
		"RTime/LAN/[::1]":               "RTime/LAN/::1",
		"RTime/LAN/[::1]/":              "RTime/LAN/::1/",
		"/RTime/LAN/0:0::1/respavg":     "/RTime/LAN/::1/respavg",
		"RTime/LAN/::1/resptime":        "RTime/LAN/::1/resptime",
		"RTime/LAN/farvel/resptime":     "RTime/LAN/farvel/resptime",
		"RTime/LAN/foreign":             "RTime/LAN/foreign",
		"RTime/LAN/":                    "RTime/LAN/",
		"CPU/[::1]/idle":                "CPU/[::1]/idle",
		"RTime/ARM/[::1]/x":             "RTime/ARM/[::1]/x",
		"RTime/LAN/::ffff:10.0.0.1/hit": "RTime/LAN/10.0.0.1/hit",
	} {
		if got := CanonicalPath(in); got != want {
			t.Errorf("CanonicalPath(%q) = %q, want %q", in, got, want)
		}
	}
}

// "::1" and "[::1]", configured or created, are one host with one number.
func TestIPv6HostTypedTwoWaysIsOneInstance(t *testing.T) {
	if err := Check(settings("::1", "[::1]")); err == nil || !strings.Contains(err.Error(), "RTime/LAN/::1") {
		t.Errorf("configured twice: %v, want a duplicate naming RTime/LAN/::1", err)
	}
	store := newStore(t)
	m := NewMonitor(settings("[::1]"), store, newFakeNet(t), nil, nil)
	if got := m.Hosts(); len(got) != 1 || got[0] != "::1" {
		t.Fatalf("configured [::1]: hosts %v, want [::1]", got)
	}
	if ok, err := m.Create("::1"); ok || err != nil {
		t.Errorf("create ::1 over configured [::1]: %v %v, want false", ok, err)
	}
	if ok, err := m.Create("[2001:db8::0001]"); !ok || err != nil {
		t.Fatalf("create [2001:db8::0001]: %v %v", ok, err)
	}
	if ok, err := m.Create("2001:db8::1"); ok || err != nil {
		t.Errorf("create it again as 2001:db8::1: %v %v, want false", ok, err)
	}
	if got := strings.Join(m.Hosts(), " "); got != "::1 2001:db8::1" {
		t.Errorf("hosts %q", got)
	}
	if !store.IsReferenced("2001:db8::1") || len(store.Referenced()) != 1 {
		t.Errorf("store keeps %v, want the canonical spelling", store.Referenced())
	}
	if err := m.Remove("[2001:db8::1]"); err != nil {
		t.Errorf("remove by the bracketed spelling: %v", err)
	}
	if _, err := m.Create("[2001:db8:1234:5678:9abc:def0:1234:5678]"); err == nil || !strings.Contains(err.Error(), "rtime_lan.hosts") {
		t.Errorf("a literal too long for an instance name: %v, want a pointer to rtime_lan.hosts", err)
	}
}

// Before a host's first reply, resptime and respavg alone have no value,
// read as not measured yet (NotYet, with the reason) rather than as a
// failed source; they get values with the reply.
func TestOnlyResponseTimesAreNotYetBeforeAReply(t *testing.T) {
	m := NewMonitor(settings("192.0.2.1"), newStore(t), newFakeNet(t), nil, nil)
	h := spmi.NewHierarchy(spmi.Config{})
	h.Add(Provider{M: m})
	var paths []string
	for _, d := range hostStats {
		paths = append(paths, "RTime/LAN/192.0.2.1/"+d.Name)
	}
	read := func() spmiwire.Sample {
		h.Invalidate()
		s, err := h.Read(context.Background(), paths)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, it := range read().Items {
		name := it.Path[strings.LastIndexByte(it.Path, '/')+1:]
		want := name == "resptime" || name == "respavg"
		if empty := it.Err != nil && it.Err.Code == spmierr.SiNoValue; empty != want || it.NotYet != want {
			t.Errorf("%s: no value %v (%v), not yet %v; want both %v", it.Path, empty, it.Err, it.NotYet, want)
		}
		if want && !strings.Contains(it.Err.Msg, "not measured yet: no echo reply from 192.0.2.1") {
			t.Errorf("%s: %q", it.Path, it.Err.Msg)
		}
	}
	m.mu.Lock()
	m.hosts["192.0.2.1"].stats.Observe(184_000, 75) // 184 µs
	m.mu.Unlock()
	for _, it := range read().Items {
		if it.Err != nil || it.NotYet {
			t.Errorf("%s after a reply: %v (not yet %v)", it.Path, it.Err, it.NotYet)
		}
		if it.Path == "RTime/LAN/192.0.2.1/resptime" {
			if got := spmi.SNMPValue(it.Stat, it.Value); got.Num != 184 {
				t.Errorf("resptime served as %v, want 184 (0.184 ms, 3 decimals)", got)
			}
		}
	}
}
