package daemon

import (
	"context"
	"path/filepath"
	"sync"

	"github.com/perfagent/subagent/client/armring"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/config"
	"github.com/perfagent/subagent/rtimearm"
	"github.com/perfagent/subagent/spmi"
)

// ARMNumberingFile is where older versions kept the ASN.1 numbers of ARM
// transactions; loadNumbering merges it into NumberingFile.
const ARMNumberingFile = "arm-numbering.json"

// startARM opens arm.sock in the run directory and adds RTime/ARM to the
// hierarchy; serve drains and accepts until ctx is done. Nil when off.
func (d *Daemon) startARM() (serve func(context.Context) error, closeSrv func(), err error) {
	a := d.cfg.ARM
	if !a.Enabled {
		return nil, func() {}, nil
	}
	reg := rtimearm.NewRegistry(rtimearm.Limits{
		MaxApps: a.MaxApplications, MaxTrans: a.MaxTransactions, MaxProcs: a.MaxProcesses,
		MaxAppsPerUID: a.MaxApplicationsPerUID, MaxTransPerUID: a.MaxTransactionsPerUID, MaxProcsPerUID: a.MaxProcessesPerUID,
		MaxAppNamesPerUID: a.MaxApplicationNamesPerUID,
		AppIdle:           a.AppIdle, HelloRate: float64(a.HelloRatePerUID), HelloBurst: a.HelloBurstPerUID,
	}, a.Weight, a.Window, d.num, d.log)
	g := armring.Geometry{Slots: uint32(a.RingSlots), Apps: uint32(a.ProcessApps), Trans: uint32(a.ProcessTrans)}
	srv, err := rtimearm.NewServer(rtimearm.ServerConfig{
		Socket:    filepath.Join(d.cfg.RunDir, "arm.sock"),
		Geometry:  g,
		AllowUIDs: config.UIDs(a.AllowUIDs), AllowGIDs: config.UIDs(a.AllowGIDs),
		OnChange: d.h.Invalidate,
		Logger:   d.log,
	}, reg)
	if err != nil {
		return nil, nil, err
	}
	d.h.Add(reg.Provider())
	objs := d.startObjectives(reg)
	if d.dir != nil {
		reg.SetOnShape(d.dir.Look) // a new application or transaction: the directory looks at once
	}
	d.addAgentStats(armStats(reg.RingUse))
	d.addReloader(Reloader{Name: "arm", Apply: func(c *config.Config) error { reg.SetWeight(c.ARM.Weight); return nil }})
	d.log.Info("arm socket ready", "path", filepath.Join(d.cfg.RunDir, "arm.sock"),
		"ring_bytes_max", uint64(a.MaxProcesses)*g.FileLen(), "ring_bytes_per_uid_max", uint64(a.MaxProcessesPerUID)*g.FileLen())
	return func(ctx context.Context) error {
		var wg sync.WaitGroup
		defer wg.Wait()
		saved := make(chan struct{})
		wg.Go(func() {
			objs.run(ctx)
			close(saved)
		})
		wg.Go(func() {
			reg.DrainEvery(ctx, a.DrainInterval)
			srv.Close()
		})
		err := srv.Serve()
		if ctx.Err() != nil {
			<-saved // the last save, after the last drain
		} else {
			objs.save()
		}
		return err
	}, func() { srv.Close() }, nil
}

// The ARM server's own statistics, under Agent/arm: not under RTime/ARM,
// whose further numbers belong to applications.
var (
	ARMCx    = spmi.CxDesc{Name: "arm", Descr: "ARM server", ASN: spmi.ASNAgentARM}
	ARMStats = []spmiwire.StatDesc{
		{Name: "rings", Descr: "Rings held, by registered and by departed live processes", ASN: 1, Max: 100, Val: ddswire.SiQuantity, Units: "rings"},
		{Name: "ringbytes", Descr: "Size of the rings held", ASN: 2, Max: 1 << 30, Val: ddswire.SiQuantity, Units: "bytes", Wide: true},
		{Name: "ringbytesuid", Descr: "Size of the rings held by the user holding most", ASN: 3, Max: 1 << 30, Val: ddswire.SiQuantity, Units: "bytes", Wide: true},
	}
)

// armStats reports the ARM server's statistics.
func armStats(use func() rtimearm.RingUse) Extra {
	return func(b *spmi.Builder, agent *spmi.Node) error {
		cx, err := b.Context(agent, &ARMCx)
		if err != nil {
			return err
		}
		u := use()
		return b.Stats(cx, ARMStats, []spmiwire.Value{spmiwire.Uint(uint64(u.Rings)), spmiwire.Uint(u.Bytes), spmiwire.Uint(u.MostByUID)})
	}
}
