package daemon

import (
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/internal/foldlog"
	"github.com/perfagent/subagent/spmi"
)

// Version is the daemon's version, shown in Agent/version.
var Version = "0.1.0"

// AgentASN is the top-level number of the Agent context.
const AgentASN = spmi.ASNAgent

var (
	agentCx = spmi.CxDesc{Name: "Agent", Descr: "The subagent's own health", ASN: AgentASN}
	provCx  = spmi.CxDesc{Name: "prov", Descr: "Statistics providers", ASN: spmi.ASNAgentProv, Inst: ddswire.SiCfgInst}
	provTpl = spmi.CxDesc{Descr: "Statistics provider"}

	agentStats = []spmiwire.StatDesc{
		{Name: "uptime", Descr: "Seconds since the daemon started", ASN: 1, Max: 86400, Val: ddswire.SiQuantity, Units: "seconds"},
		{Name: "stats", Descr: "Statistics in the tree at the previous refresh", ASN: 2, Max: 100000, Val: ddswire.SiQuantity, Units: "statistics"},
		{Name: "refreshes", Descr: "Snapshots published: readings of any context, apart too", ASN: 3, Max: 10, Val: ddswire.SiCounter},
		{Name: "readerrors", Descr: "Sources that failed, summed over refreshes", ASN: 4, Max: 10, Val: ddswire.SiCounter},
		{Name: "failing", Descr: "Sources failing at the previous refresh", ASN: 5, Max: 10, Val: ddswire.SiQuantity, Units: "sources"},
		{Name: "refreshms", Descr: "Duration of the previous refresh (ms)", ASN: 6, Max: 1000, Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 3, Units: "milliseconds"},
		{Name: "pid", Descr: "Process ID of the daemon", ASN: 7, Max: 4194304, Val: ddswire.SiQuantity},
		{Name: "version", Descr: "Version of the daemon", ASN: 8, Val: ddswire.SiQuantity, Data: spmiwire.SiText},
		{Name: "goroutines", Descr: "Goroutines of the daemon", ASN: 9, Max: 1000, Val: ddswire.SiQuantity, Units: "goroutines"},
		{Name: "requested", Descr: "Readings requests started: values older than their age", ASN: 10, Max: 10, Val: ddswire.SiCounter},
	}
	provStats = []spmiwire.StatDesc{
		{Name: "collectms", Descr: "Duration of the provider's previous collection (ms)", ASN: 1, Max: 1000, Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 3, Units: "milliseconds"},
		{Name: "agems", Descr: "Age of the values served now (ms); 0: read when asked for", ASN: 2, Max: 60000, Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 3, Units: "milliseconds"},
		{Name: "maxagems", Descr: "Age the values may reach before they are read again (ms)", ASN: 3, Max: 60000, Val: ddswire.SiQuantity, Units: "milliseconds"},
		{Name: "apart", Descr: "1: read apart from requests, which never wait for it", ASN: 4, Max: 1, Val: ddswire.SiQuantity, Form: spmiwire.FormBool},
		{Name: "disabled", Descr: "Why it is no longer read (a panic); empty while it serves", ASN: 5, Val: ddswire.SiQuantity, Data: spmiwire.SiText},
	}
)

// whyDisabled is why the providers named name, or under it (RTime/ARM
// for RTime), were disabled; "" when none was.
func whyDisabled(disabled map[string]string, name string) string {
	var why []string
	for p, w := range disabled {
		if p == name || strings.HasPrefix(p, name+"/") {
			why = append(why, p+": "+w)
		}
	}
	sort.Strings(why)
	s := strings.Join(why, "; ")
	return foldlog.Cut(s, spmi.MaxDisplayString)
}

// Extra adds statistics of another part of the daemon (the SNMP front
// ends) under the Agent context.
type Extra func(b *spmi.Builder, agent *spmi.Node) error

// agentProvider reports the daemon's health through its own tree. It reads
// the hierarchy's statistics of the previous refresh, never the current one.
type agentProvider struct {
	start time.Time
	h     *spmi.Hierarchy
	pid   int
	names func() []string

	mu     sync.Mutex
	extras []Extra
}

func (a *agentProvider) Name() string { return "Agent" }

func (a *agentProvider) addExtra(e Extra) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.extras = append(a.extras, e)
}

func (a *agentProvider) Collect(b *spmi.Builder) error {
	cx, err := b.Context(nil, &agentCx)
	if err != nil {
		return err
	}
	st := a.h.Stats()
	prev := a.h.Current()
	n, failing := 0, 0
	if prev != nil {
		n, failing = prev.NumStats, len(prev.Failures)
	}
	vals := []spmiwire.Value{
		spmiwire.Uint(uint64(b.Now().Sub(a.start) / time.Second)),
		spmiwire.Uint(uint64(n)),
		spmiwire.Uint(st.Refreshes),
		spmiwire.Uint(st.ReadErrors),
		spmiwire.Uint(uint64(failing)),
		spmiwire.Float(float64(st.LastTook) / float64(time.Millisecond)),
		spmiwire.Uint(uint64(a.pid)),
		spmiwire.Text(Version),
		spmiwire.Uint(uint64(runtime.NumGoroutine())),
		spmiwire.Uint(st.Requested),
	}
	if err := b.Stats(cx, agentStats, vals); err != nil {
		return err
	}
	pc, err := b.Context(cx, &provCx)
	if err != nil {
		return err
	}
	// Ages are those of the providers' top-level contexts, which is what
	// the hierarchy reads together.
	ages := map[string]spmi.Ages{}
	for _, g := range a.h.Ages(b.Now()) {
		ages[g.Context] = g
	}
	ms := func(d time.Duration) spmiwire.Value { return spmiwire.Float(float64(d) / float64(time.Millisecond)) }
	disabled := a.h.Disabled()
	// Providers are numbered by their place in the daemon's list, which is
	// fixed for a given configuration.
	for i, name := range a.names() {
		inst, err := b.Instance(pc, &provTpl, name, "Provider "+name, uint32(i+1))
		if err != nil {
			return err
		}
		vals := []spmiwire.Value{spmiwire.NoValue, spmiwire.NoValue, spmiwire.NoValue, spmiwire.NoValue, spmiwire.Text(whyDisabled(disabled, name))}
		if d, ok := st.ProviderDur[name]; ok {
			vals[0] = ms(d)
		}
		top, _, _ := strings.Cut(name, "/")
		if g, ok := ages[top]; ok {
			apart := uint64(0)
			if g.Apart {
				apart = 1
			}
			if top == agentCx.Name {
				g.Age = 0 // read now, by this very collection
			}
			vals[1], vals[2], vals[3] = ms(g.Age), spmiwire.Uint(uint64(g.MaxAge/time.Millisecond)), spmiwire.Uint(apart)
		}
		if err := b.Stats(inst, provStats, vals); err != nil {
			return err
		}
	}
	a.mu.Lock()
	extras := append([]Extra(nil), a.extras...)
	a.mu.Unlock()
	for _, e := range extras {
		if err := e(b, cx); err != nil {
			return err
		}
	}
	return nil
}
