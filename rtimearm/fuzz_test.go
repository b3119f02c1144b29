package rtimearm

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/armring"
	"github.com/perfagent/subagent/spmi"
)

// FuzzHostileFile writes arbitrary bytes over a process's tables, ring
// and counters (all a process can write), then drains and collects: the
// daemon must refuse what is wrong and never panic or stall.
func FuzzHostileFile(f *testing.F) {
	g := armring.Geometry{Slots: 16, Apps: 2, Trans: 2}
	good := make([]byte, g.FileLen())
	gf, _ := armring.NewFile(good, g)
	gf.InitSlots()
	gf.PublishApp(0, &armring.App{ID: 1, Key: "a"})
	gf.PublishTran(0, &armring.Tran{ID: 2, Key: "t", Types: [7]uint32{armring.Gauge64}})
	gf.Post(&armring.Record{Mask: 1, Dur: 5})
	f.Add(good[armring.HeaderLen:], uint16(0))
	f.Add([]byte{1, 0, 0, 0, 0xff}, uint16(300))
	f.Fuzz(func(t *testing.T, b []byte, at uint16) {
		file, fd, unmap, err := createFile(g, 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		unix.Close(fd)
		unix.Close(fd)
		defer unmap()
		mem := file.Bytes()
		copy(mem[armring.HeaderLen+int(at)%int(g.FileLen()-armring.HeaderLen):], b)
		reg := NewRegistry(Limits{MaxApps: 2, MaxTrans: 2}, 75, time.Minute, nil, nil)
		p := &proc{id: 1, f: file, unmap: func() {}}
		reg.procs[1] = p
		done := make(chan struct{})
		go func() {
			defer close(done)
			reg.DrainAll()
			bld := spmi.NewBuilder(asn1tree.OID{1, 3}, nil, time.Now())
			if err := reg.Provider().Collect(bld); err != nil {
				t.Errorf("collect: %v", err)
			}
			bld.Finish()
			p.close(reg, time.Now(), true)
		}()
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Fatal("drain did not finish")
		}
	})
}
