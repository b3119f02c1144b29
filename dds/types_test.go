package dds

import (
	"testing"

	"github.com/perfagent/subagent/spmi"
)

// The wire's enums map onto spmi's by meaning, each value once.
func TestWireEnumsMapOntoSpmi(t *testing.T) {
	for w, s := range map[InstFreq]spmi.InstFreq{SiNoInst: spmi.SiNoInst, SiCfgInst: spmi.SiCfgInst, SiContInst: spmi.SiContInst} {
		if got := spmiInst(w); got != s {
			t.Errorf("spmiInst(%v) = %v, want %v", w, got, s)
		}
	}
	for w, s := range map[ValType]spmi.ValType{SiCounter: spmi.SiCounter, SiQuantity: spmi.SiQuantity} {
		if got := spmiValType(w); got != s {
			t.Errorf("spmiValType(%v) = %v, want %v", w, got, s)
		}
	}
	for d := DataType(0); d.Valid(); d++ {
		want := spmi.SiLong
		if d == SiFloat || d == SiDouble || d == SiTimeval {
			want = spmi.SiFloat
		}
		if got := presented(d); got != want {
			t.Errorf("presented(%v) = %v, want %v", d, got, want)
		}
	}
}
