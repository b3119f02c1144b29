package daemon

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/perfagent/subagent/armring"
	"github.com/perfagent/subagent/config"
	"github.com/perfagent/subagent/rtimearm"
	"github.com/perfagent/subagent/spmi"
)

// ARMNumberingFile keeps the ASN.1 numbers of ARM transactions (the
// applications' are instances, kept in NumberingFile).
const ARMNumberingFile = "arm-numbering.json"

// armNames adds RTime to the top-level names when ARM is on.
func armNames(c *config.Config, names []string) []string {
	if c.ARM.Enabled && !slices.Contains(names, "RTime") {
		names = append(names, "RTime")
	}
	return names
}

func uint32s(in []int) []uint32 {
	out := make([]uint32, len(in))
	for i, v := range in {
		out[i] = uint32(v)
	}
	return out
}

// startARM opens arm.sock in the run directory and adds RTime/ARM to the
// hierarchy; serve drains and accepts until ctx is done. Nil when off.
func (d *Daemon) startARM() (serve func(context.Context) error, err error) {
	a := d.cfg.ARM
	if !a.Enabled {
		return nil, nil
	}
	num, err := spmi.LoadNumbering(filepath.Join(d.cfg.StateDir, ARMNumberingFile))
	if err != nil {
		return nil, err
	}
	reg := rtimearm.NewRegistry(rtimearm.Limits{MaxApps: a.MaxApplications, MaxTrans: a.MaxTransactions},
		a.Weight, a.Window, num, d.log)
	srv, err := rtimearm.NewServer(rtimearm.ServerConfig{
		Socket:    filepath.Join(d.cfg.RunDir, "arm.sock"),
		Geometry:  armring.Geometry{Slots: uint32(a.RingSlots), Apps: uint32(a.ProcessApps), Trans: uint32(a.ProcessTrans)},
		MaxProcs:  a.MaxProcesses,
		AllowUIDs: uint32s(a.AllowUIDs), AllowGIDs: uint32s(a.AllowGIDs),
		OnChange: d.h.Invalidate,
		Logger:   d.log,
	}, reg)
	if err != nil {
		return nil, fmt.Errorf("arm socket: %w", err)
	}
	d.h.Add(reg.Provider())
	d.AddReloader(Reloader{Name: "arm", Apply: func(c *config.Config) { reg.SetWeight(c.ARM.Weight) }})
	d.log.Info("arm socket ready", "path", filepath.Join(d.cfg.RunDir, "arm.sock"))
	return func(ctx context.Context) error {
		go func() {
			reg.DrainEvery(ctx, a.DrainInterval)
			srv.Close()
		}()
		return srv.Serve()
	}, nil
}
