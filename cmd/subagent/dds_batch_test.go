package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"

	client "github.com/perfagent/subagent/client/ddsclient"
	"github.com/perfagent/subagent/client/testutil"
	"github.com/perfagent/subagent/internal/snmpdtest"
)

// One SNMP GET of four DDS values that a supplier writes together, in a
// tight loop inside Update, returns four equal values: through snmpd over
// AgentX and through the standalone responder, many times over while the
// values move. Every request refreshes (min_age 0s), so each GET reads
// the supplier's file anew.
func TestDDSBatchOneGetOneMoment(t *testing.T) {
	s := snmpdtest.Start(t, snmpdtest.Options{})
	port := snmpdtest.FreeUDPPort(t)
	e := newEnv(t)
	conf := filepath.Join(t.TempDir(), "subagent.yaml")
	if err := os.WriteFile(conf, []byte("refresh:\n  min_age: 0s\n  snmp_wait: 500ms\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.start("--config", conf, "--agentx", s.AgentXAddress, "--listen", fmt.Sprintf("127.0.0.1:%d", port))
	waitServed(t, s, idleOID, 10*time.Second)

	v := client.NewVendor("Batch", "Values written together", 77)
	cx := v.Context("Pair", "Four counters of one batch", 1)
	var vals [4]*client.Counter
	oids := make([]string, 4)
	for i := range vals {
		vals[i] = cx.Counter(fmt.Sprintf("v%d", i+1), "Incremented with the others", uint32(i+1))
		oids[i] = fmt.Sprintf("%s.99.77.1.%d.0", base, i+1)
	}
	sup, err := client.Start(v, filepath.Join(t.TempDir(), "batch.shm"), &client.Options{Socket: filepath.Join(e.runDir, "dds.sock")})
	if err != nil {
		t.Fatalf("supplier: %v", err)
	}
	stop, stopped := make(chan struct{}), make(chan uint64)
	go func() {
		var n uint64
		for {
			select {
			case <-stop:
				stopped <- n
				return
			default:
			}
			sup.Update(func() {
				for _, c := range vals {
					c.Inc()
				}
			})
			n++
		}
	}()
	t.Cleanup(func() {
		if stop != nil {
			close(stop)
			<-stopped
		}
		sup.Exit()
	})

	for _, target := range []struct {
		name, addr, community string
	}{
		{"snmpd", s.Addr, s.Community},
		{"responder", fmt.Sprintf("127.0.0.1:%d", port), "public"},
	} {
		g := &gosnmp.GoSNMP{Target: "127.0.0.1", Community: target.community, Version: gosnmp.Version2c,
			Timeout: 2 * time.Second, Retries: 1}
		fmt.Sscanf(target.addr, "127.0.0.1:%d", &g.Port)
		if err := g.Connect(); err != nil {
			t.Fatal(err)
		}
		defer g.Conn.Close()
		get := func() ([]uint64, error) {
			r, err := g.Get(oids)
			if err != nil {
				return nil, err
			}
			out := make([]uint64, len(r.Variables))
			for i, vb := range r.Variables {
				if vb.Type != gosnmp.Counter64 {
					return nil, fmt.Errorf("%s is %v", vb.Name, vb.Type)
				}
				out[i] = gosnmp.ToBigInt(vb.Value).Uint64()
			}
			return out, nil
		}
		// A context has no value before its first consistent read.
		testutil.Eventually(t, target.name+" serves the supplier", 10*time.Second, func() bool {
			v, err := get()
			return err == nil && v[0] > 0
		})
		distinct := map[uint64]bool{}
		const gets = 300
		for i := 0; i < gets; i++ {
			v, err := get()
			if err != nil {
				t.Fatalf("%s: GET %d: %v", target.name, i, err)
			}
			if len(v) != 4 || v[0] != v[1] || v[0] != v[2] || v[0] != v[3] {
				t.Fatalf("%s: GET %d returned %v: values written together, read at different moments", target.name, i, v)
			}
			distinct[v[0]] = true
		}
		// Moving values make the check above mean something; how often
		// they move between GETs depends on the machine's load.
		if len(distinct) < gets/30 {
			t.Fatalf("%s: %d GETs saw only %d distinct values: the values did not move", target.name, gets, len(distinct))
		}
		t.Logf("%s: %d GETs, %d distinct values", target.name, gets, len(distinct))
	}
	close(stop)
	t.Logf("%d batches", <-stopped)
	stop = nil
}
