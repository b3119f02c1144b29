package dds

import (
	"testing"

	"github.com/perfagent/subagent/spmi"
)

// The guide's DataTypes are presented as the two formats spmi serves.
func TestDataTypesArePresentedAsLongOrFloat(t *testing.T) {
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
