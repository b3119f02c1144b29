package agentx

import (
	"testing"
	"time"

	"github.com/perfagent/subagent/asn1tree"
)

type releasedView struct {
	asn1tree.View
	released *int
}

func (v releasedView) Release() { *v.released++ }

// Views of transactions past the TTL are dropped and released, so an
// idle session keeps no snapshot alive; younger ones stay.
func TestViewCacheExpires(t *testing.T) {
	n := 0
	c := viewCache{load: func() asn1tree.View { return releasedView{released: &n} }}
	t0 := time.Now()
	c.get(1, t0)
	c.get(2, t0.Add(viewCacheTTL-time.Second))
	c.expire(t0.Add(viewCacheTTL))
	if n != 1 {
		t.Fatalf("%d views released, want the expired one", n)
	}
	used := 0
	for _, s := range c.slots {
		if s.used {
			used++
			if s.tid != 2 {
				t.Fatalf("kept transaction %d, want 2", s.tid)
			}
		}
	}
	if used != 1 {
		t.Fatalf("%d slots in use, want 1", used)
	}
}
