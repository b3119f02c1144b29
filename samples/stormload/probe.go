package main

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"time"

	"github.com/gosnmp/gosnmp"
)

// probe GETs oids at addr (SNMPv2c, community public) every `every`
// for dur, one request at a time, and prints the latency percentiles:
// "probe: N gets, p50 X ms, p99 Y ms, max Z ms, E errors".
func probe(addr string, oids []string, every, dur time.Duration) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("-probe: %w", err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return fmt.Errorf("-probe %s: port: %w", addr, err)
	}
	g := &gosnmp.GoSNMP{Target: host, Port: uint16(p), Community: "public", Version: gosnmp.Version2c, Timeout: 2 * time.Second, Retries: 0}
	if err := g.Connect(); err != nil {
		return err
	}
	defer g.Conn.Close()
	var lat []time.Duration
	errs := 0
	t := time.NewTicker(every)
	defer t.Stop()
	for end := time.Now().Add(dur); time.Now().Before(end); <-t.C {
		t0 := time.Now()
		r, err := g.Get(oids)
		if err != nil || r.Error != gosnmp.NoError || len(r.Variables) != len(oids) {
			errs++
			continue
		}
		lat = append(lat, time.Since(t0))
	}
	if len(lat) == 0 {
		return fmt.Errorf("-probe %s: no GET answered (%d errors)", addr, errs)
	}
	slices.Sort(lat)
	q := func(f float64) float64 { return float64(lat[int(f*float64(len(lat)-1))].Microseconds()) / 1000 }
	fmt.Printf("probe: %d gets, p50 %.2f ms, p99 %.2f ms, max %.2f ms, %d errors\n", len(lat), q(0.5), q(0.99), q(1), errs)
	return nil
}
