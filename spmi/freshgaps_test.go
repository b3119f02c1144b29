package spmi

import (
	"slices"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/ddswire"
	"github.com/perfagent/subagent/client/spmiwire"
)

// procs serves one row per pid, each with the number of the reading that
// saw it; a reading takes took on the bubble's clock.
type procs struct {
	took  time.Duration
	mu    sync.Mutex
	pids  []uint32
	calls int
}

var (
	procsCx  = CxDesc{Name: "Proc", Descr: "Processes", ASN: 7, Inst: ddswire.SiCfgInst}
	procsTpl = CxDesc{Descr: "A process"}
	procsN   = spmiwire.StatDesc{Name: "n", Descr: "reading that saw it", ASN: 1, Val: ddswire.SiQuantity}
)

func (p *procs) Name() string { return "Proc" }
func (p *procs) Collect(b *Builder) error {
	p.mu.Lock()
	p.calls++
	n, pids := p.calls, slices.Clone(p.pids)
	p.mu.Unlock()
	time.Sleep(p.took)
	cx, err := b.Context(nil, &procsCx)
	if err != nil {
		return err
	}
	for _, pid := range pids {
		s := strconv.Itoa(int(pid))
		in, err := b.Instance(cx, &procsTpl, s, "pid "+s, pid)
		if err != nil {
			return err
		}
		if err := b.Stat(in, &procsN, spmiwire.Uint(uint64(n))); err != nil {
			return err
		}
	}
	return nil
}

func (p *procs) start(pid uint32) {
	p.mu.Lock()
	p.pids = append(p.pids, pid)
	p.mu.Unlock()
}

func (p *procs) readings() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls
}

// procOID is the scalar OID of pid's statistic n.
func procOID(pid uint32) asn1tree.OID { return testBase.Append(procsCx.ASN, pid, procsN.ASN, 0) }

func procHierarchy(p *procs) *Hierarchy {
	h := NewHierarchy(Config{Base: testBase, MinAge: time.Second, WarmFor: time.Minute,
		MaxAge: map[string]time.Duration{"Proc": 30 * time.Second}})
	h.Add(p)
	h.Refresh()
	return h
}

// A GET of a process newer than Proc's reading waits for Proc to be read
// again when the reading is older than MinAge, within the answer's wait;
// within MinAge it is answered at once (no such instance), and an answer
// that may not wait (a hotset's) does not read.
func TestRequestForAMissingInstanceWaitsForItsReading(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &procs{took: 100 * time.Millisecond, pids: []uint32{1}}
		h := procHierarchy(p)
		if st := h.Stats(); st.Refreshes != 1 || st.Requested != 0 {
			t.Fatalf("after one Refresh: %d published, %d requested, want 1 and 0", st.Refreshes, st.Requested)
		}
		p.start(2)
		if _, ok := h.Current().AnswerWithin(500 * time.Millisecond).Get(procOID(2)); ok {
			t.Fatal("pid 2 found in a reading that did not see it")
		}
		if n := p.readings(); n != 1 {
			t.Fatalf("%d readings, want 1: values younger than min_age are served as they are", n)
		}
		time.Sleep(2 * time.Second)
		if _, ok := h.Current().Answer().Get(procOID(2)); ok {
			t.Fatal("pid 2 found without a reading")
		}
		synctest.Wait()
		req := h.Stats().Requested
		start := time.Now()
		v, ok := h.Current().AnswerWithin(500 * time.Millisecond).Get(procOID(2))
		if !ok || v.Num != 2 {
			t.Fatalf("GET of pid 2 after its reading was %v old: %v %v, want the second reading's value", 2*time.Second, v, ok)
		}
		if waited := time.Since(start); waited != p.took {
			t.Errorf("the GET waited %v, want the reading's %v", waited, p.took)
		}
		if got := h.Stats().Requested - req; got != 1 {
			t.Errorf("requested readings went up by %d, want 1", got)
		}
		// A reading longer than the wait: answered without it, at the
		// wait, and the reading goes on for the next request.
		p.took = time.Second
		p.start(3)
		time.Sleep(2 * time.Second)
		start = time.Now()
		if _, ok := h.Current().AnswerWithin(500 * time.Millisecond).Get(procOID(3)); ok || time.Since(start) != 500*time.Millisecond {
			t.Errorf("GET with a reading longer than the wait: found %v after %v, want noSuchInstance at 500ms", ok, time.Since(start))
		}
		time.Sleep(time.Second)
		if _, ok := h.Current().AnswerWithin(0).Get(procOID(3)); !ok {
			t.Error("pid 3 not served once the reading the GET started was done")
		}
	})
}

// The first walk after Proc sat unread (longer than WarmFor: read at the
// daemon's interval only) reads what it walks, within its wait; once it
// is warm, walks are served from the background reading as before.
func TestFirstWalkAfterAPauseReadsWhatItWalks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &procs{took: 100 * time.Millisecond, pids: []uint32{1, 2}}
		h := procHierarchy(p)
		time.Sleep(5 * time.Minute) // unread: not warm
		walk := func(a *Answer) (vals []uint64) {
			end := testBase.Append(procsCx.ASN + 1)
			for o := testBase.Append(procsCx.ASN); ; {
				next, v, ok := a.Search(o, false, end)
				if !ok {
					return vals
				}
				vals, o = append(vals, v.Num), next
			}
		}
		if got := walk(h.Current().Answer()); !slices.Equal(got, []uint64{1, 1}) {
			t.Fatalf("an answer that may not wait walked %v, want the first reading's [1 1]", got)
		}
		synctest.Wait() // the reading that walk started in the background
		time.Sleep(5 * time.Minute)
		a := h.Current().AnswerWithin(500 * time.Millisecond)
		got := walk(a)
		if want := uint64(p.readings()); !slices.Equal(got, []uint64{want, want}) {
			t.Fatalf("the first walk after a pause served readings %v, want the one it started (%d)", got, want)
		}
		if age := time.Since(a.DataTime()); age > p.took {
			t.Errorf("the walk served values %v old, want at most the reading's %v", age, p.took)
		}
		// Warm now: the next walk within the part's age waits for nothing.
		time.Sleep(500 * time.Millisecond)
		n := p.readings()
		start := time.Now()
		walk(h.Current().AnswerWithin(500 * time.Millisecond))
		if time.Since(start) != 0 || p.readings() != n {
			t.Errorf("a walk of a warm Proc waited %v and read %d times", time.Since(start), p.readings()-n)
		}
	})
}

// A context read apart is read again after 20 times its own reading, not
// 20 times the whole collection it was read in: read after a slow
// context (a Refresh reads every group in turn), Proc's age stays that of
// its own reading.
func TestApartAgeIsItsOwnReadingTimesTwenty(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		slow := &clockProvider{name: "CPU", asn: 1, took: 2 * time.Second}
		p := &procs{took: 100 * time.Millisecond, pids: []uint32{1}}
		h := NewHierarchy(Config{Base: testBase, MinAge: time.Second, MaxAge: map[string]time.Duration{"Proc": 30 * time.Second}})
		h.Add(slow)
		h.Add(p)
		h.Refresh()
		for _, a := range h.Ages(time.Now()) {
			if a.Context == "Proc" && a.MaxAge != readCost*p.took {
				t.Errorf("Proc's age %v, want %d times its reading's %v", a.MaxAge, readCost, p.took)
			}
		}
	})
}
