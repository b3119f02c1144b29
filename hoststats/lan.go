package hoststats

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"

	"github.com/prometheus/procfs"
	"github.com/prometheus/procfs/sysfs"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/spmi"
)

var (
	lanCx     = spmi.CxDesc{Name: "LAN", Descr: "Network interface statistics", ASN: spmi.ASNLAN, Inst: ddswire.SiCfgInst}
	lanInstCx = spmi.CxDesc{Name: "interface", Descr: "Network interface", Inst: ddswire.SiNoInst}
)

var lanStats = []spmiwire.StatDesc{
	lanCount("ipacket", "Packets received", 1, 10000, "packets"),
	lanCount("opacket", "Packets sent", 2, 10000, "packets"),
	lanCount("ibyte", "Bytes received", 3, 125000000, "bytes"),
	lanCount("obyte", "Bytes sent", 4, 125000000, "bytes"),
	lanCount("ierror", "Receive errors", 5, 10, "packets"),
	lanCount("oerror", "Transmit errors", 6, 10, "packets"),
	lanCount("idrop", "Received packets dropped", 7, 10, "packets"),
	lanCount("odrop", "Packets dropped while sending", 8, 10, "packets"),
	lanCount("collision", "Collisions", 9, 10, "collisions"),
	lanCount("imcast", "Multicast packets received", 10, 1000, "packets"),
	{Name: "mtu", Descr: "Maximum transmission unit", ASN: 11, Max: 65536, Val: ddswire.SiQuantity, Data: spmiwire.SiLong, Units: "bytes"},
	{Name: "speed", Descr: "Link speed (no value when the driver has none)", ASN: 12, Max: 100000, Val: ddswire.SiQuantity, Data: spmiwire.SiLong, Units: "Mbit/s"},
}

func lanCount(name, descr string, asn uint32, hi int64, units string) spmiwire.StatDesc {
	return spmiwire.StatDesc{Name: name, Descr: descr, ASN: asn, Max: hi, Val: ddswire.SiCounter, Data: spmiwire.SiLong, Units: units}
}

type lanProvider struct {
	proc   procfs.FS
	src    string
	netDir string

	mu   sync.Mutex
	last []seen
}

func newLAN(r *resolved) spmi.Provider {
	return &lanProvider{proc: r.proc, src: filepath.Join(r.ProcRoot, "net", "dev"), netDir: filepath.Join(r.SysRoot, "class", "net")}
}

func (p *lanProvider) Name() string { return "LAN" }

func (p *lanProvider) Collect(b *spmi.Builder) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	cx, err := b.Context(nil, &lanCx)
	if err != nil {
		return err
	}
	var dev procfs.NetDev
	if err := guard(func() (err error) { dev, err = p.proc.NetDev(); return }); err != nil {
		b.Fail(p.src, err)
		return readdSeen(b, cx, &lanInstCx, p.last, lanStats)
	}
	names := make([]string, 0, len(dev))
	for n := range dev {
		names = append(names, n)
	}
	slices.Sort(names)
	p.last = p.last[:0]
	for _, n := range names {
		attrs, err := p.attributes(n)
		if err != nil {
			// Without its ifindex an interface has no number.
			b.Fail(filepath.Join(p.netDir, n), err)
			continue
		}
		s := seen{name: n, descr: "Network interface " + n, asn: uint32(*attrs.ifindex)}
		in, err := b.Instance(cx, &lanInstCx, s.name, s.descr, s.asn)
		if err != nil {
			return err
		}
		d := dev[n]
		if err := b.Stats(in, lanStats, []spmiwire.Value{
			spmiwire.Uint(d.RxPackets), spmiwire.Uint(d.TxPackets), spmiwire.Uint(d.RxBytes), spmiwire.Uint(d.TxBytes),
			spmiwire.Uint(d.RxErrors), spmiwire.Uint(d.TxErrors), spmiwire.Uint(d.RxDropped), spmiwire.Uint(d.TxDropped),
			spmiwire.Uint(d.TxCollisions), spmiwire.Uint(d.RxMulticast),
			positive(attrs.mtu), positive(attrs.speed),
		}); err != nil {
			return err
		}
		p.last = append(p.last, s)
	}
	return nil
}

// ifAttrs are the sysfs attributes of an interface that LAN reports.
type ifAttrs struct {
	ifindex, mtu, speed *int64
}

// attributes reads /sys/class/net/<if>/{ifindex,mtu,speed} with procfs's
// sysfs parser, one attribute at a time: NetClass() would read every
// attribute of every interface. mtu and speed are optional (virtual
// devices have no speed; a link that is down refuses it).
func (p *lanProvider) attributes(name string) (ifAttrs, error) {
	var c sysfs.NetClassIface
	dir := filepath.Join(p.netDir, name)
	if err := sysfs.ParseNetClassAttribute(dir, "ifindex", &c); err != nil {
		return ifAttrs{}, err
	}
	_ = sysfs.ParseNetClassAttribute(dir, "mtu", &c)
	_ = sysfs.ParseNetClassAttribute(dir, "speed", &c)
	a := ifAttrs{ifindex: c.IfIndex, mtu: c.MTU, speed: c.Speed}
	if a.ifindex == nil {
		return a, errors.New("no ifindex")
	}
	if *a.ifindex <= 0 || *a.ifindex > 1<<31-1 {
		return a, fmt.Errorf("ifindex %d out of range", *a.ifindex)
	}
	return a, nil
}

// positive is a sysfs number that is meaningful only above zero (speed is
// -1 on a link that is down).
func positive(p *int64) spmiwire.Value {
	if p == nil || *p <= 0 {
		return spmiwire.NoValue
	}
	return spmiwire.Uint(uint64(*p))
}
