package hotset

import (
	"fmt"
	"sync"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
	"github.com/perfagent/subagent/spmi"
)

var testBase = asn1tree.OID{1, 3, 6, 1, 4, 1, 32473, 1}

// fakeHost is a synthetic provider whose values the test sets: Disk with
// instances (busy counter, qlen quantity, model text), and FS with two
// levels (FS/<vg>/<lv>/used) where a volume group can appear later.
type fakeHost struct {
	mu       sync.Mutex
	busy     map[string]uint64
	qlen     map[string]int64
	used     map[string]map[string]float64 // vg -> lv -> percent
	resp     map[string]map[string]float64 // ARM: application -> transaction -> respavg
	collects int
}

var (
	diskCx  = spmi.CxDesc{Name: "Disk", Descr: "Disks", ASN: 4, Inst: ddswire.SiCfgInst}
	diskTpl = spmi.CxDesc{Descr: "Disk"}
	diskSt  = []spmiwire.StatDesc{
		{Name: "busy", Descr: "busy", ASN: 6, Max: 100, Val: ddswire.SiCounter},
		{Name: "qlen", Descr: "qlen", ASN: 7, Min: -10, Max: 64, Val: ddswire.SiQuantity},
		{Name: "model", Descr: "model", ASN: 8, Val: ddswire.SiQuantity, Data: spmiwire.SiText},
	}
	fsCx  = spmi.CxDesc{Name: "FS", Descr: "File systems", ASN: 11}
	vgCx  = spmi.CxDesc{Descr: "Volume group", Inst: ddswire.SiCfgInst}
	lvTpl = spmi.CxDesc{Descr: "Logical volume"}
	// Shaped as rtimearm builds RTime/ARM: instances of applications
	// holding (non-instance) transaction contexts.
	armCx  = spmi.CxDesc{Name: "ARM", Descr: "ARM", ASN: 13, Inst: ddswire.SiContInst}
	appTpl = spmi.CxDesc{Descr: "ARM application", Inst: ddswire.SiContInst}
	respS  = spmiwire.StatDesc{Name: "respavg", Descr: "respavg", ASN: 2, Max: 1000, Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 3}
	usedS  = spmiwire.StatDesc{Name: "used", Descr: "used", ASN: 1, Max: 100, Val: ddswire.SiQuantity, Data: spmiwire.SiFloat, Scale: 2}
)

func newFake() *fakeHost {
	return &fakeHost{busy: map[string]uint64{}, qlen: map[string]int64{}, used: map[string]map[string]float64{},
		resp: map[string]map[string]float64{}}
}

func (f *fakeHost) Name() string { return "fake" }

func (f *fakeHost) Collect(b *spmi.Builder) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.collects++
	d, err := b.Context(nil, &diskCx)
	if err != nil {
		return err
	}
	for _, name := range sortedKeys(f.busy) {
		inst, err := b.Instance(d, &diskTpl, name, "", 0)
		if err != nil {
			return err
		}
		if err := b.Stats(inst, diskSt, []spmiwire.Value{spmiwire.Uint(f.busy[name]), spmiwire.Int(f.qlen[name]), spmiwire.Text("m")}); err != nil {
			return err
		}
	}
	fs, err := b.Context(nil, &fsCx)
	if err != nil {
		return err
	}
	asn := uint32(0)
	for _, vg := range sortedKeys(f.used) {
		asn++
		c := vgCx
		c.Name, c.ASN = vg, asn
		vcx, err := b.Context(fs, &c)
		if err != nil {
			return err
		}
		for _, lv := range sortedKeys(f.used[vg]) {
			inst, err := b.Instance(vcx, &lvTpl, lv, "", 0)
			if err != nil {
				return err
			}
			if err := b.Stat(inst, &usedS, spmiwire.Float(f.used[vg][lv])); err != nil {
				return err
			}
		}
	}
	arm, err := b.Context(nil, &armCx)
	if err != nil {
		return err
	}
	for _, app := range sortedKeys(f.resp) {
		an, err := b.Instance(arm, &appTpl, app, "", 0)
		if err != nil {
			return err
		}
		for i, tx := range sortedKeys(f.resp[app]) {
			tn, err := b.Context(an, &spmi.CxDesc{Name: tx, Descr: "tx", ASN: uint32(i + 1)})
			if err != nil {
				return err
			}
			if err := b.Stat(tn, &respS, spmiwire.Float(f.resp[app][tx])); err != nil {
				return err
			}
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// clock is a controllable time source.
type clock struct{ t time.Time }

func (c *clock) now() time.Time      { return c.t }
func (c *clock) add(d time.Duration) { c.t = c.t.Add(d) }
func newClock() *clock               { return &clock{t: time.Unix(1700000000, 0)} }
func snapAt(f *fakeHost, t time.Time) *spmi.Snapshot {
	b := spmi.NewBuilder(testBase, nil, t)
	if err := f.Collect(b); err != nil {
		panic(fmt.Sprint(err))
	}
	return b.Finish()
}
