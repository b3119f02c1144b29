package rtimearm_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/arm"
	"github.com/perfagent/subagent/client/armring"
	"github.com/perfagent/subagent/client/testutil"
)

// The registry tells when an application or a transaction appears or
// goes, as it drains, with nobody reading the tree (the directory looks
// then).
func TestRegistryTellsShapeChanges(t *testing.T) {
	fx := startServer(t, armring.Geometry{Slots: 64, Apps: 2, Trans: 2})
	var told atomic.Int32
	fx.Reg.SetOnShape(func() { told.Add(1) })
	ag := arm.Open(&arm.Options{Socket: fx.Socket, Wait: 5 * time.Second})
	defer ag.Close()
	if !ag.Connected() {
		t.Fatal("agent did not connect")
	}
	q := ag.App("Shape Test", "*").Transaction("Lookup", "")
	h := q.Start()
	h.Stop(arm.Good)
	testutil.Eventually(t, "the application and its transaction told", time.Minute, func() bool {
		fx.Reg.DrainAll()
		return told.Load() == 2
	})
	h = q.Start()
	h.Stop(arm.Good)
	fx.Reg.DrainAll()
	if n := told.Load(); n != 2 {
		t.Errorf("told %d times after a second transaction of the same name, want 2", n)
	}
	if !fx.Reg.DeleteApp("ShapeTest") {
		t.Fatal("no application ShapeTest")
	}
	if n := told.Load(); n != 3 {
		t.Errorf("told %d times after the application was deleted, want 3", n)
	}
}
