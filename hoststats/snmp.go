package hoststats

import (
	"path/filepath"

	"github.com/prometheus/procfs"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/spmi"
)

// snmpSource reads the protocol counters of the daemon's network
// namespace, /proc/self/net/snmp (procfs parses it per process only).
// IP, TCP, UDP and ICMP share one read of it per refresh.
type snmpSource struct {
	proc procfs.FS
	src  string
}

func newSNMPSource(r *resolved) snmpSource {
	return snmpSource{proc: r.proc, src: filepath.Join(r.ProcRoot, "self", "net", "snmp")}
}

func (s snmpSource) read(b *spmi.Builder) (*procfs.ProcSnmp, error) {
	return spmi.Shared(b, s.src, func() (*procfs.ProcSnmp, error) {
		var out procfs.ProcSnmp
		err := guard(func() error {
			self, err := s.proc.Self()
			if err != nil {
				return err
			}
			out, err = self.Snmp()
			return err
		})
		return &out, err
	})
}

// snmpProvider is one SNMP protocol group as a context without instances.
type snmpProvider struct {
	snmpSource
	cx     *spmi.CxDesc
	stats  []spmiwire.StatDesc
	values func(*procfs.ProcSnmp) []spmiwire.Value
}

func (p *snmpProvider) Name() string { return p.cx.Name }

func (p *snmpProvider) Collect(b *spmi.Builder) error {
	cx, err := b.Context(nil, p.cx)
	if err != nil {
		return err
	}
	s, err := p.read(b)
	if err != nil {
		b.Fail(p.src, err)
		return b.Stats(cx, p.stats, nil)
	}
	return b.Stats(cx, p.stats, p.values(s))
}

func snmpCount(name, descr string, asn uint32, hi int64, units string) spmiwire.StatDesc {
	return spmiwire.StatDesc{Name: name, Descr: descr, ASN: asn, Max: hi, Val: ddswire.SiCounter, Data: spmiwire.SiLong, Units: units}
}
