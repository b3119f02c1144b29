package daemon

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/perfagent/subagent/config"
	"github.com/perfagent/subagent/dds"
)

// DDSConfig turns the dds settings into the supplier server's configuration.
func DDSConfig(c *config.Config, log *slog.Logger) dds.ServerConfig {
	ids := func(in []int) []uint32 {
		out := make([]uint32, len(in))
		for i, v := range in {
			out[i] = uint32(v)
		}
		return out
	}
	return dds.ServerConfig{
		Socket: c.DDS.Socket, Group: c.DDS.Group,
		AllowUIDs: ids(c.DDS.AllowUIDs), AllowGIDs: ids(c.DDS.AllowGIDs),
		StampTimeout: c.DDS.StampTimeout, MaxSuppliers: c.DDS.MaxSuppliers,
		Limits: c.DDS.Limits(),
		Logger: log,
	}
}

// startDDS opens the supplier socket and adds the DDS context to the
// hierarchy; serve runs until ctx is done. Nil when DDS is disabled.
func (d *Daemon) startDDS() (serve func(context.Context) error, err error) {
	if !d.cfg.DDS.Enabled {
		return nil, nil
	}
	cfg := DDSConfig(d.cfg, d.log)
	cfg.OnChange = d.h.Invalidate
	cfg, err = cfg.Norm()
	if err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	srv, err := dds.NewServer(cfg)
	if err != nil {
		return nil, fmt.Errorf("dds socket: %w", err)
	}
	d.h.Add(srv.Provider())
	d.log.Info("dds socket ready", "path", cfg.Socket)
	return func(ctx context.Context) error {
		go func() { <-ctx.Done(); srv.Close() }()
		return srv.Serve()
	}, nil
}
