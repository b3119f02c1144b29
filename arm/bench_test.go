package arm

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/perfagent/subagent/armring"
	"github.com/perfagent/subagent/rtimearm"
)

// BenchmarkStartStop is one Start plus Stop against a real daemon's
// server, which drains in the background (go test -bench StartStop ./arm/).
func BenchmarkStartStop(b *testing.B) {
	sock := filepath.Join(b.TempDir(), "arm.sock")
	reg := rtimearm.NewRegistry(rtimearm.Limits{MaxApps: 4, MaxTrans: 4}, 75, time.Minute, nil, nil)
	srv, err := rtimearm.NewServer(rtimearm.ServerConfig{Socket: sock, Geometry: armring.Geometry{Slots: 1 << 16, Apps: 4, Trans: 4}}, reg)
	if err != nil {
		b.Fatal(err)
	}
	go srv.Serve()
	defer srv.Close()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go reg.DrainEvery(ctx, time.Millisecond)
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
