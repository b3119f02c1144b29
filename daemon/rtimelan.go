package daemon

import (
	"context"
	"fmt"
	"sync"

	"github.com/perfagent/subagent/config"
	"github.com/perfagent/subagent/rtimelan"
)

// rtimeLAN is the network response time part (RTime/LAN): its state is
// loaded in New, its sockets are opened in Run.
type rtimeLAN struct {
	// change orders the settings' changes and the monitor's start, which
	// save the hosts (disk I/O); mu, which the host table's readers take,
	// is never held across them.
	change sync.Mutex
	mu     sync.Mutex
	set    rtimelan.Settings // the latest settings, reloads included
	store  *rtimelan.Store
	m      *rtimelan.Monitor // nil until Run opened the sockets
	open   rtimelan.Opener   // nil: icmp.ListenPacket
}

// initRTimeLAN takes the hosts kept in the daemon's numbering and
// registers for reloads. A damaged state file (loadNumbering's rtlErr,
// or bad RTime/LAN entries) turns RTime/LAN off, not the daemon, and is
// left as it is for the operator.
func (d *Daemon) initRTimeLAN(rtlErr error) {
	if !d.cfg.RTimeLAN.Enabled {
		return
	}
	if rtlErr != nil {
		d.log.Error("RTime/LAN is off", "err", rtlErr)
		return
	}
	store, err := rtimelan.OpenStore(d.num)
	if err != nil {
		d.log.Error("RTime/LAN is off", "err", err)
		return
	}
	r := &rtimeLAN{set: RTimeLANSettings(d.cfg.RTimeLAN), store: store}
	d.rtl = r
	d.addReloader(Reloader{
		Name: "rtime_lan",
		Check: func(c *config.Config) error {
			if !c.RTimeLAN.Enabled {
				return fmt.Errorf("rtime_lan.enabled: turning RTime/LAN off needs a restart")
			}
			return rtimelan.Check(RTimeLANSettings(c.RTimeLAN))
		},
		Apply: func(c *config.Config) error {
			r.change.Lock()
			defer r.change.Unlock()
			s := RTimeLANSettings(c.RTimeLAN)
			r.mu.Lock()
			r.set = s
			m := r.m
			r.mu.Unlock()
			if m != nil {
				m.Apply(s)
			}
			return nil
		},
	})
}

// startRTimeLAN opens the ICMP sockets and adds RTime/LAN to the
// hierarchy; the returned function measures until ctx is done. Without
// sockets the daemon runs on without RTime/LAN, saying why.
func (d *Daemon) startRTimeLAN() func(context.Context) error {
	r := d.rtl
	if r == nil {
		return nil
	}
	p, v6err, err := rtimelan.OpenPinger(r.open)
	if err != nil {
		d.log.Error("RTime/LAN is off: no ICMP socket can be opened", "err", err)
		return nil
	}
	if v6err != nil {
		d.log.Warn("RTime/LAN measures IPv4 hosts only", "err", v6err)
	}
	r.change.Lock()
	m := rtimelan.NewMonitor(r.set, r.store, p, nil, d.log) // r.set changes under change too
	r.mu.Lock()
	r.m = m
	r.mu.Unlock()
	r.change.Unlock()
	d.h.Add(rtimelan.Provider{M: m})
	d.log.Info("RTime/LAN measuring", "hosts", m.Hosts(), "ipv4", kind(p.V4), "ipv6", kind(p.V6))
	return func(ctx context.Context) error { m.Run(ctx); return nil }
}

func kind(s *rtimelan.Socket) string {
	switch {
	case s == nil:
		return "none"
	case s.Dgram:
		return "datagram"
	}
	return "raw"
}
