package arm

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/perfagent/subagent/client/armring"
)

// noDaemon is an agent whose socket does not exist.
func noDaemon(t testing.TB) *Agent {
	a := Open(&Options{Socket: filepath.Join(t.TempDir(), "arm.sock"), Retry: time.Hour})
	t.Cleanup(a.Close)
	return a
}

func TestNamesFollowTheGuide(t *testing.T) {
	a := noDaemon(t)
	app := a.App("Checking Account Query", "*")
	if app.key != "CheckingAccountQuery" || app.descr != "Checking Account Query" {
		t.Fatalf("key %q descr %q", app.key, app.descr)
	}
	if again := a.App("Checking  Account Query ", ""); again != app || app.uses != 2 {
		t.Fatalf("the same key gave another application or use count %d", app.uses)
	}
	tr := app.Transaction("Check if any check of this account has bounced during the past 12 months", "first")
	if tr.entry.Key != "Checkifanycheckofthisaccounthas" {
		t.Fatalf("key %q", tr.entry.Key)
	}
	if again := app.Transaction("Checkifanycheckofthisaccounthas", "second"); again != tr || again.entry.Detail != "first" {
		t.Fatalf("re-registration: %p %p detail %q", again, tr, again.entry.Detail)
	}
	// Ids depend on names only: another process gets the same ones.
	b := noDaemon(t)
	if b.App("Checking Account Query", "").ID() != app.ID() {
		t.Fatal("the same application has another id in another agent")
	}
	if a.App("", "").ID() >= 0 {
		t.Fatal("an application without a key has a valid id")
	}
}

func TestEndDeactivatesUntilRegisteredAgain(t *testing.T) {
	a := noDaemon(t)
	app := a.App("app", "")
	a.App("app", "")
	tr := app.Transaction("t", "")
	app.End()
	if h := tr.Start(); !h.Valid() {
		t.Fatal("one End of two Inits deactivated the application")
	}
	app.End()
	if h := tr.Start(); h.Valid() {
		t.Fatal("the transaction is active after the application ended")
	}
	if app.Transaction("t", "") != nil {
		t.Fatal("a transaction was registered for an ended application")
	}
	a.App("app", "")
	if h := app.Transaction("t", "").Start(); !h.Valid() {
		t.Fatal("registering again did not re-activate the transaction")
	}
}

func TestWithoutADaemonStopCountsTheLoss(t *testing.T) {
	a := noDaemon(t)
	tr := a.App("app", "").Transaction("t", "")
	h := tr.Start()
	h.Stop(Good)
	h.Stop(Good) // a second stop is a no-op
	if tr.lost.Load() != 1 {
		t.Fatalf("lost %d, want 1", tr.lost.Load())
	}
}

func TestDisabled(t *testing.T) {
	t.Setenv("INVOKE_ARM", "false")
	a := noDaemon(t)
	h := a.App("app", "").Transaction("t", "").Start()
	if h.Valid() {
		t.Fatal("INVOKE_ARM=false measured")
	}
}

func TestCorrelatorRoundTripAndRefusals(t *testing.T) {
	a := noDaemon(t)
	tr := a.App("client", "").Transaction("request", "")
	h := tr.Start()
	c := h.Correlator()
	got, err := ParseCorrelator(c.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	ptran, _, agent, vendor := got.fields()
	if ptran != uint32(tr.ID()) || agent != a.agent || vendor != VendorID {
		t.Fatalf("fields %d %d %d", ptran, agent, vendor)
	}
	for _, b := range [][]byte{nil, c.Bytes()[:10], append([]byte{0, 200}, c.Bytes()[2:]...)} {
		if _, err := ParseCorrelator(b); err == nil {
			t.Errorf("accepted %x", b)
		}
	}
	child := tr.StartChild(got)
	if child.flags&armring.FlagParent == 0 {
		t.Fatal("no parent flag")
	}
}

func TestStartStopAllocateNothing(t *testing.T) {
	a := noDaemon(t)
	tr := a.App("app", "").Transaction("t", "", Metric{Field: 1, Type: Counter64, Name: "bytes"})
	n := testing.AllocsPerRun(1000, func() {
		h := tr.Start()
		h.Set(1, 5)
		h.Stop(Good)
	})
	if n != 0 {
		t.Fatalf("%v allocations per start/stop", n)
	}
}

func FuzzParseCorrelator(f *testing.F) {
	a := Open(&Options{Socket: "/nonexistent/arm.sock", Retry: time.Hour})
	defer a.Close()
	h := a.App("x", "").Transaction("y", "").Start()
	c := h.Correlator()
	f.Add(c.Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseCorrelator(b)
		if err == nil && (len(c.Bytes()) < corrMin || len(c.Bytes()) > len(b)) {
			t.Fatalf("accepted a correlator of %d bytes from %d", len(c.Bytes()), len(b))
		}
	})
}
