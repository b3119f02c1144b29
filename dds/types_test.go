package dds

import (
	"testing"

	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
)

// The guide's DataTypes are presented as the two formats spmi serves.
func TestDataTypesArePresentedAsLongOrFloat(t *testing.T) {
	for d := ddswire.DataType(0); d.Valid(); d++ {
		want := spmiwire.SiLong
		if d == ddswire.SiFloat || d == ddswire.SiDouble || d == ddswire.SiTimeval {
			want = spmiwire.SiFloat
		}
		if got := presented(d); got != want {
			t.Errorf("presented(%v) = %v, want %v", d, got, want)
		}
	}
}
