package arm

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/perfagent/subagent/armring"
	"github.com/perfagent/subagent/config"
	"github.com/perfagent/subagent/rtimearm"
)

// BenchmarkStartStop is one Start plus Stop against a real daemon's
// server draining in the background (go test -bench StartStop ./arm/):
// with the shipped ring and drain interval, and tuned (64 Ki slots, 1 ms).
func BenchmarkStartStop(b *testing.B) {
	c, err := config.Load(nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, v := range []struct {
		name  string
		slots int
		every time.Duration
	}{{"shipped", c.ARM.RingSlots, c.ARM.DrainInterval}, {"tuned", 1 << 16, time.Millisecond}} {
		b.Run(v.name, func(b *testing.B) { benchStartStop(b, uint32(v.slots), v.every) })
	}
}

func benchStartStop(b *testing.B, slots uint32, every time.Duration) {
	sock := filepath.Join(b.TempDir(), "arm.sock")
	reg := rtimearm.NewRegistry(rtimearm.Limits{MaxApps: 4, MaxTrans: 4}, 75, time.Minute, nil, nil)
	srv, err := rtimearm.NewServer(rtimearm.ServerConfig{Socket: sock, Geometry: armring.Geometry{Slots: slots, Apps: 4, Trans: 4}}, reg)
	if err != nil {
		b.Fatal(err)
	}
	go srv.Serve()
	defer srv.Close()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go reg.DrainEvery(ctx, every)
	a := Open(&Options{Socket: sock})
	defer a.Close()
	if !a.Connected() {
		b.Fatal("not connected")
	}
	tr := a.App("bench", "").Transaction("pair", "")
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		h := tr.Start()
		h.Stop(Good)
	}
}
