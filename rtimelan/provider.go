package rtimelan

import (
	"net/netip"
	"slices"
	"strings"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmierr"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/spmi"
)

var (
	lanCx   = spmi.CxDesc{Name: "LAN", Descr: "Network response time (ICMP echo) by host", ASN: spmi.ASNRTimeLAN, Inst: ddswire.SiCfgInst}
	hostTpl = spmi.CxDesc{Descr: "Network response time to a host"}

	// lanStats are RTime/LAN's own statistics (1 to 15; hosts start at 16).
	lanStats = []spmiwire.StatDesc{
		{Name: "hosts", Descr: "Hosts measured", ASN: 1, Max: 100, Val: ddswire.SiQuantity},
		{Name: "cycles", Descr: "Measurement cycles started", ASN: 2, Max: 1, Val: ddswire.SiCounter},
		{Name: "skipped", Descr: "Timer ticks skipped: a cycle was still running", ASN: 3, Max: 1, Val: ddswire.SiCounter},
		{Name: "late", Descr: "Echo replies after the timeout, ignored", ASN: 4, Max: 10, Val: ddswire.SiCounter},
		{Name: "duplicate", Descr: "Second echo replies to one request, ignored", ASN: 5, Max: 10, Val: ddswire.SiCounter},
		{Name: "foreign", Descr: "Echo replies with our identifier matching no request", ASN: 6, Max: 10, Val: ddswire.SiCounter},
	}

	// hostStats are the guide's metrics of one host.
	hostStats = []spmiwire.StatDesc{
		{Name: "resptime", Descr: "Latest response time (ms)", ASN: 1, Max: 100, Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 3, Units: "milliseconds"},
		{Name: "respavg", Descr: "Weighted average response time (ms)", ASN: 2, Max: 100, Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 3, Units: "milliseconds"},
		{Name: "below10", Descr: "Response times below 10 ms (percent)", ASN: 3, Max: 100, Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 2, Units: "percent"},
		{Name: "below20", Descr: "Response times from 10 to 20 ms (percent)", ASN: 4, Max: 100, Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 2, Units: "percent"},
		{Name: "below100", Descr: "Response times from 20 to 100 ms (percent)", ASN: 5, Max: 100, Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 2, Units: "percent"},
		{Name: "above99", Descr: "Response times of 100 ms or more (percent)", ASN: 6, Max: 100, Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 2, Units: "percent"},
		{Name: "requests", Descr: "Echo requests sent", ASN: 7, Max: 1, Val: ddswire.SiCounter},
		{Name: "responses", Descr: "Echo replies received", ASN: 8, Max: 1, Val: ddswire.SiCounter},
		{Name: "address", Descr: "Address measured", ASN: 9, Val: ddswire.SiQuantity, Data: spmiwire.SiText},
	}
)

// Provider serves RTime/LAN from a monitor, and creates a host's context
// when a path under RTime/LAN names it (spmi.Creator).
type Provider struct{ M *Monitor }

// Name is the provider's name in the daemon's Agent context.
func (p Provider) Name() string { return "RTime" }

// Collect adds RTime/LAN (and RTime, if RTime/ARM has not).
func (p Provider) Collect(b *spmi.Builder) error {
	rt, err := b.RTime()
	if err != nil {
		return err
	}
	lan, err := b.Context(rt, &lanCx)
	if err != nil {
		return err
	}
	c, hosts := p.M.view()
	err = b.Stats(lan, lanStats, []spmiwire.Value{
		spmiwire.Uint(uint64(c.Hosts)), spmiwire.Uint(c.Cycles), spmiwire.Uint(c.Skipped),
		spmiwire.Uint(c.Late), spmiwire.Uint(c.Duplicate), spmiwire.Uint(c.Foreign),
	})
	if err != nil {
		return err
	}
	for _, h := range hosts {
		inst, err := b.Instance(lan, &hostTpl, h.name, "Response time to "+h.host, h.asn)
		if err != nil {
			return err
		}
		s := &h.stats
		// No value until the first reply, and readers are told why.
		resp, avg := spmiwire.Unmeasured(h.why()), spmiwire.Unmeasured(h.why())
		if s.Responses > 0 {
			resp, avg = spmiwire.Float(s.LastMillis()), spmiwire.Float(s.Avg)
		}
		addr := spmiwire.Text("")
		if h.addr.IsValid() {
			addr = spmiwire.Text(h.addr.String())
		}
		err = b.Stats(inst, hostStats, []spmiwire.Value{
			resp, avg,
			spmiwire.Float(s.BandPercent(0)), spmiwire.Float(s.BandPercent(1)), spmiwire.Float(s.BandPercent(2)), spmiwire.Float(s.BandPercent(3)),
			spmiwire.Uint(s.Requests), spmiwire.Uint(s.Responses), addr,
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// Create implements spmi.Creator: RTime/LAN/<host> and
// RTime/LAN/<host>/<statistic> create the host's context, as the guide's
// SpmiPathGetCx("RTime/LAN/farvel") does. Other paths are not ours.
func (p Provider) Create(path string) (bool, error) {
	parts := strings.Split(path, "/")
	if len(parts) < 3 || len(parts) > 4 || parts[0] != "RTime" || parts[1] != "LAN" {
		return false, nil
	}
	if len(parts) == 4 && !slices.ContainsFunc(hostStats, func(d spmiwire.StatDesc) bool { return d.Name == parts[3] }) {
		return false, nil
	}
	if slices.ContainsFunc(lanStats, func(d spmiwire.StatDesc) bool { return d.Name == parts[2] }) {
		return false, nil
	}
	return p.M.Create(parts[2])
}

// hostView is a copy of a host for one collection.
type hostView struct {
	name, host string
	asn        uint32
	addr       netip.Addr
	stats      Stats
	problem    string // why requests get no response, when known
}

// why is what keeps h without a round trip, "" once it has one.
func (h *hostView) why() string {
	switch {
	case h.stats.Responses > 0:
		return ""
	case h.problem != "":
		return "not measured yet: " + h.problem
	}
	return "not measured yet: no echo reply from " + h.name + " so far"
}

// view copies what Collect serves, in number order.
func (m *Monitor) view() (Counts, []hostView) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.counts
	c.Hosts = len(m.hosts)
	out := make([]hostView, 0, len(m.hosts))
	for _, name := range m.namesLocked() {
		h := m.hosts[name]
		out = append(out, hostView{name: h.name, host: h.host, asn: h.asn, addr: h.addr, stats: h.stats, problem: h.problem})
	}
	return c, out
}

// Delete implements spmi.Deleter: RTime/LAN/<host> stops measuring a host
// created by reference (configured hosts go with the configuration).
func (p Provider) Delete(path string) (bool, error) {
	parts := strings.Split(path, "/")
	if len(parts) != 3 || parts[0] != "RTime" || parts[1] != "LAN" {
		return false, nil
	}
	if err := p.M.Remove(parts[2]); err != nil {
		return false, spmierr.Errorf(spmierr.SiNotFound, "%v", err)
	}
	return true, nil
}
