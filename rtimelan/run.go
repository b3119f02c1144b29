package rtimelan

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"sync"
	"time"
)

// Run sends and receives until ctx is done, then closes the transport.
func (m *Monitor) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); m.tr.Receive(m.Handle) }()
	defer func() {
		m.tr.Close()
		wg.Wait()
		m.resolvers.Wait()
	}()
	for {
		now := m.clock.Now()
		m.mu.Lock()
		// A request given up was counted when it was sent.
		m.match.Expire(now.Add(-m.set.Timeout), now)
		name, wake := m.sched.Step(now, m.namesLocked)
		m.counts.Cycles, m.counts.Skipped = m.sched.Cycles, m.sched.Skipped
		m.mu.Unlock()
		if name != "" {
			m.send(ctx, name, now)
			continue // the next host may be due at once
		}
		// Wake at least every second to give up unanswered requests.
		d := min(wake.Sub(now), time.Second)
		select {
		case <-ctx.Done():
			return
		case <-m.kick:
		case <-m.clock.After(d):
		}
	}
}

// namesLocked lists the hosts in number order: the order of a cycle.
func (m *Monitor) namesLocked() []string {
	hs := make([]*host, 0, len(m.hosts))
	for _, h := range m.hosts {
		hs = append(hs, h)
	}
	slices.SortFunc(hs, func(a, b *host) int { return int(a.asn) - int(b.asn) })
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.name
	}
	return out
}

// send sends one request to the host named name, resolving its name first
// when needed. A lookup runs in its own goroutine so that a slow name
// server does not hold up the other hosts; the request is sent when it
// returns.
func (m *Monitor) send(ctx context.Context, name string, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	h := m.hosts[name]
	if h == nil {
		return // removed during the cycle
	}
	if a, err := netip.ParseAddr(h.host); err == nil {
		h.addr, h.resolvedAt = a.Unmap(), now
	}
	if h.addr.IsValid() && now.Sub(h.resolvedAt) < resolveTTL {
		m.sendLocked(h, h.addr, now)
		return
	}
	if h.resolving {
		// The previous lookup has not returned: this round gets no answer.
		h.stats.Sent()
		return
	}
	h.resolving = true
	m.resolvers.Add(1)
	go func() {
		defer m.resolvers.Done()
		lctx, cancel := context.WithTimeout(ctx, resolveTimeout)
		addrs, err := m.resolve(lctx, h.host)
		cancel()
		m.mu.Lock()
		defer m.mu.Unlock()
		h.resolving = false
		if m.hosts[name] != h || ctx.Err() != nil {
			return
		}
		addr, err := m.pick(addrs, err)
		if err != nil {
			h.stats.Sent() // a name that does not resolve is a request without response
			m.problem(h, fmt.Errorf("cannot resolve %s: %w", h.host, err))
			return
		}
		h.addr, h.resolvedAt = addr, m.clock.Now()
		m.sendLocked(h, addr, h.resolvedAt)
	}()
}

// pick chooses the address to measure: the first IPv4 one when there is
// an IPv4 socket, else the first IPv6 one.
func (m *Monitor) pick(addrs []netip.Addr, err error) (netip.Addr, error) {
	if err != nil {
		return netip.Addr{}, err
	}
	for _, v6 := range []bool{false, true} {
		for _, a := range addrs {
			a = a.Unmap()
			if a.Is6() == v6 && m.tr.Has(a) {
				return a, nil
			}
		}
	}
	if len(addrs) == 0 {
		return netip.Addr{}, fmt.Errorf("no address")
	}
	return netip.Addr{}, fmt.Errorf("no ICMP socket for the address family of %s", addrs[0])
}

func (m *Monitor) sendLocked(h *host, addr netip.Addr, now time.Time) {
	h.stats.Sent()
	if !m.tr.Has(addr) {
		m.problem(h, fmt.Errorf("no ICMP socket for the address family of %s", addr))
		return
	}
	seq := m.match.Next(h.name, addr, now)
	if err := m.tr.Send(addr, seq, m.match.Payload()); err != nil {
		m.match.Forget(seq)
		m.problem(h, fmt.Errorf("cannot send to %s: %w", addr, err))
		return
	}
	m.problem(h, nil)
}

// problem logs a host's resolution or send failure when it starts or
// changes, and its end: once per change, not once per request.
func (m *Monitor) problem(h *host, err error) {
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	if msg == h.problem {
		return
	}
	if msg == "" {
		m.log.Info("RTime/LAN: host reachable again", "host", h.host)
	} else {
		m.log.Warn("RTime/LAN: requests to host get no response", "host", h.host, "err", msg)
	}
	h.problem = msg
}

// Handle takes one received ICMP message.
func (m *Monitor) Handle(v6 bool, b []byte, from netip.Addr, at time.Time) {
	id := m.tr.ID(v6)
	m.mu.Lock()
	defer m.mu.Unlock()
	v, name, rtt := m.match.Match(v6, id, b, from, at)
	if v == Answer && rtt > m.set.Timeout {
		// After the timeout, before Run gave the request up: late, as
		// it would be a moment later.
		v = Late
	}
	switch v {
	case Answer:
		if h := m.hosts[name]; h != nil {
			h.stats.Observe(rtt, m.set.Weight)
		}
	case Late:
		m.counts.Late++
	case Duplicate:
		m.counts.Duplicate++
	case Foreign:
		m.counts.Foreign++
	}
}
