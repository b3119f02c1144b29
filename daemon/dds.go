package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/config"
	"github.com/perfagent/subagent/dds"
	"github.com/perfagent/subagent/spmi"
)

// DDSConfig turns the dds settings into the supplier server's configuration.
func DDSConfig(c *config.Config, log *slog.Logger) dds.ServerConfig {
	return dds.ServerConfig{
		Socket: c.DDS.Socket, Group: c.DDS.Group,
		AllowUIDs: config.UIDs(c.DDS.AllowUIDs), AllowGIDs: config.UIDs(c.DDS.AllowGIDs),
		StampTimeout: c.DDS.StampTimeout, MaxSuppliers: c.DDS.MaxSuppliers, MaxStatsAll: c.DDS.MaxStatsAll,
		MaxSuppliersPerUID: c.DDS.MaxSuppliersPerUID, MaxStatsPerUID: c.DDS.MaxStatsPerUID,
		Reserve: ddsReservations(c.DDS),
		Limits:  ddsLimits(c.DDS.DDSLimits),
		Logger:  log,
	}
}

// startDDS opens the supplier socket and adds the DDS context to the
// hierarchy; serve runs until ctx is done. Nil when DDS is disabled.
func (d *Daemon) startDDS() (serve func(context.Context) error, closeSrv func(), err error) {
	if !d.cfg.DDS.Enabled {
		return nil, func() {}, nil
	}
	cfg := DDSConfig(d.cfg, d.log)
	cfg.OnChange = d.h.Invalidate
	if d.dir != nil {
		cfg.OnTree = d.dir.Source(ddswire.Root).Change // each registration is a generation, seen as it happens
	}
	cfg, err = cfg.Norm()
	if err != nil {
		return nil, nil, fmt.Errorf("configuration: %w", err)
	}
	srv, err := dds.NewServer(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("dds socket: %w", err)
	}
	d.h.Add(srv.Provider())
	d.addAgentStats(ddsStats(srv.Stats))
	d.log.Info("dds socket ready", "path", cfg.Socket)
	return func(ctx context.Context) error {
		var wg sync.WaitGroup
		defer wg.Wait()
		wg.Go(func() { <-ctx.Done(); srv.Close() })
		return srv.Serve()
	}, func() { srv.Close() }, nil
}

// The supplier server's own statistics, under Agent/dds.
var (
	DDSCx    = spmi.CxDesc{Name: "dds", Descr: "Dynamic Data Supplier server", ASN: spmi.ASNAgentDDS}
	DDSStats = []spmiwire.StatDesc{
		{Name: "suppliers", Descr: "Suppliers registered", ASN: 1, Max: 256, Val: ddswire.SiQuantity, Units: "suppliers"},
		{Name: "stalereads", Descr: "Reads that served older values: a batch stayed open", ASN: 2, Max: 10, Val: ddswire.SiCounter, Units: "reads"},
	}
)

// ddsStats reports the supplier server's statistics.
func ddsStats(stats func() dds.Stats) Extra {
	return func(b *spmi.Builder, agent *spmi.Node) error {
		cx, err := b.Context(agent, &DDSCx)
		if err != nil {
			return err
		}
		st := stats()
		return b.Stats(cx, DDSStats, []spmiwire.Value{spmiwire.Uint(uint64(st.Suppliers)), spmiwire.Uint(st.StaleReads)})
	}
}
