package dds

import (
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/perfagent/subagent/client/ddswire/ddswiretest"
	"github.com/perfagent/subagent/client/spmierr"
)

// OnTree is told every context at the start, then the contexts each
// registration and departure adds and removes, in order, with nobody
// reading the tree.
func TestServerTellsTreeChanges(t *testing.T) {
	var mu sync.Mutex
	var told []string
	s, _ := testServer(t, func(s *Server) {
		s.reg.setOnTree(func(added, removed []string) {
			var c []string
			for _, p := range added {
				c = append(c, "+"+p)
			}
			for _, p := range removed {
				c = append(c, "-"+p)
			}
			slices.Sort(c)
			mu.Lock()
			told = append(told, strings.Join(c, " "))
			mu.Unlock()
		})
	})
	a := newSupFile(t, ddswiretest.GuideInit())
	a.register(s, spmierr.SiSuccess)
	b := newSupFile(t, otherInit("DDS/IBM/Other", 230))
	b.register(s, spmierr.SiSuccess)
	got := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(told)
	}
	a.c.Close()
	eventually(t, "A's departure told", func() bool { return len(got()) >= 4 })
	b.c.Close()
	eventually(t, "B's departure told", func() bool { return len(got()) >= 5 })
	want := []string{"+DDS/", "+DDS/IBM/ +DDS/IBM/Moretest/ +DDS/IBM/Moretest/SubTest/ +DDS/IBM/Test/", "+DDS/IBM/Other/",
		"-DDS/IBM/Moretest/ -DDS/IBM/Moretest/SubTest/ -DDS/IBM/Test/", "-DDS/IBM/ -DDS/IBM/Other/"}
	if g := got(); !slices.Equal(g, want) {
		t.Errorf("told\n%q\nwant\n%q", g, want)
	}
}
