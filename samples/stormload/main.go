// Command stormload drives a hotset into an alarm storm, the load behind
// scripts/bench-storm.sh: one Dynamic Data Supplier (vendor Storm, ASN
// 7) serving -hot standing peer sets DDS/Storm/h<i>/p whose load stays
// above 50 at every second, and -new new peer names a second,
// DDS/Storm/n<k>/p (each a supplier of its own, leaving -keep later),
// each a peer set a hotset over DDS/Storm/*/load has never seen, so each
// one raises at once. It stops after -duration (0: at SIGTERM or SIGINT) and
// prints the new peer sets it registered.
//
//	go run ./samples/stormload -hot 100 -new 20 -duration 2m
//
// With -probe ADDR it GETs -oids at the SNMP responder ADDR every -every
// for -duration and prints the latency's p50, p99 and maximum.
//
// With -procs N -proc-root DIR it adds N processes to the /proc at DIR
// (a copy of hoststats/testdata/proc: the fixture host of
// scripts/bench-expr-get.sh) and exits.
//
// With -seed N -journal FILE it instead fills the notification log
// journal FILE with N notifications shaped as the hotset's (the log is
// then full at log_entries N) and exits: the storm's "log already full".
// A FILE ending in .json is written as the whole-file log of earlier
// versions (notifications.json), for the comparison with them.
//
//	go run ./samples/stormload -seed 10000 -journal state/notifications.journal
package main

import (
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/perfagent/subagent/asn1tree"
	"github.com/perfagent/subagent/client/ddsclient"
	"github.com/perfagent/subagent/daemon"
	"github.com/perfagent/subagent/hoststats"
	"github.com/perfagent/subagent/hotset"
	"github.com/perfagent/subagent/notiflog"
)

func main() {
	hot := flag.Int("hot", 100, "standing peer sets above the threshold")
	perSec := flag.Int("new", 20, "new peer names a second")
	keep := flag.Duration("keep", 5*time.Second, "how long a new peer set lives")
	dur := flag.Duration("duration", 0, "how long to run (0: until SIGTERM)")
	dir := flag.String("dir", os.TempDir(), "directory of the shared file")
	seed := flag.Int("seed", 0, "fill the journal with this many notifications and exit")
	journal := flag.String("journal", "", "the notification log journal -seed fills")
	base := flag.String("base", "1.3.6.1.4.1.32473.1", "the daemon's base OID (-seed)")
	addr := flag.String("probe", "", "GET -oids at this SNMP address (v2c, public) every -every for -duration; print the latency")
	oids := flag.String("oids", "1.3.6.1.2.1.1.3.0", "OIDs -probe GETs, comma-separated")
	every := flag.Duration("every", 50*time.Millisecond, "time between -probe's GETs")
	procs := flag.Int("procs", 0, "add this many processes to the /proc at -proc-root and exit")
	procRoot := flag.String("proc-root", "", "the /proc -procs adds to")
	flag.Parse()
	var err error
	switch {
	case *addr != "":
		err = probe(*addr, strings.Split(*oids, ","), *every, max(*dur, time.Second))
	case *procs > 0:
		err = hoststats.AddFixtureProcs("hoststats", *procRoot, *procs)
	case *seed > 0:
		err = fill(*journal, *seed, *base)
	default:
		err = run(*hot, *perSec, *keep, *dur, *dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "stormload:", err)
		os.Exit(1)
	}
}

// born is a new peer set's supplier and when it registered.
type born struct {
	at time.Time
	s  *ddsclient.Supplier
}

func run(hot, perSec int, keep, dur time.Duration, dir string) error {
	if hot < 0 || perSec < 0 || hot > 500 || perSec*int(keep/time.Second+1) > 250 {
		return fmt.Errorf("-hot %d (at most 500), -new %d and -keep %v (at most 250 live, within dds.max_suppliers 256)", hot, perSec, keep)
	}
	v := ddsclient.NewVendor("Storm", "Peer names that keep coming", 7)
	loads := make([]*ddsclient.Gauge, hot)
	for i := range hot {
		p := v.Context(fmt.Sprintf("h%d", i+1), "A standing peer set", uint32(i+1)).Context("p", "Its peer", 1)
		loads[i] = p.Gauge("load", "Load", 1, ddsclient.Range(0, 100))
	}
	s, err := ddsclient.Start(v, filepath.Join(dir, fmt.Sprintf("stormload-%d.shm", os.Getpid())), nil)
	if err != nil {
		return err
	}
	defer s.Exit()
	var alive []born
	defer func() {
		for _, b := range alive {
			b.s.Exit()
		}
	}()
	set100 := func(sec int) {
		s.Update(func() {
			for i, g := range loads {
				g.Set(int64(60 + (i+sec)%40)) // above 50, moving
			}
		})
	}
	set100(0)
	fmt.Printf("stormload: %d standing peer sets registered; %d new peer names a second\n", hot, perSec)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	var end <-chan time.Time
	if dur > 0 {
		end = time.After(dur)
	}
	k, failed := 0, 0
	var firstErr error
	start := time.Now()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for sec := 1; ; sec++ {
		select {
		case <-stop:
			end = nil
		case <-end:
			end = nil
		case <-t.C:
			set100(sec)
			now := time.Now()
			for len(alive) > 0 && now.Sub(alive[0].at) >= keep {
				alive[0].s.Exit()
				alive = alive[1:]
			}
			for range perSec {
				k++
				n, err := newPeerSet(dir, k, uint32(hot+k)) // numbered after the standing ones
				if err != nil {
					failed++
					firstErr = cmp.Or(firstErr, err)
					continue
				}
				alive = append(alive, born{now, n})
			}
			s.Stamp()
			continue
		}
		if firstErr != nil {
			fmt.Printf("stormload: the first refused: %v\n", firstErr)
		}
		fmt.Printf("stormload: %d new peer sets registered in %.1f s, %d refused\n", k-failed, time.Since(start).Seconds(), failed)
		return nil
	}
}

// newPeerSet registers a supplier of its own serving DDS/Storm/n<k>/p
// with load 90: a new peer set (the hotset's peer sets are permanent
// contexts; a volatile context's children are no peers, as CPU/total
// is none).
func newPeerSet(dir string, k int, asn uint32) (*ddsclient.Supplier, error) {
	v := ddsclient.NewVendor("Storm", "Peer names that keep coming", 7)
	g := v.Context(fmt.Sprintf("n%d", k), "A new peer set", asn).Context("p", "Its peer", 1).Gauge("load", "Load", 1, ddsclient.Range(0, 100))
	s, err := ddsclient.Start(v, filepath.Join(dir, fmt.Sprintf("stormload-%d-n%d.shm", os.Getpid(), k)), nil)
	if err != nil {
		return nil, err
	}
	s.Update(func() { g.Set(90) })
	return s, nil
}

// fill adds n notifications of the storm's hotset to the journal, built
// as the daemon builds them (daemon.Notification), each sent to one
// destination.
func fill(file string, n int, base string) error {
	if file == "" {
		return fmt.Errorf("-seed needs -journal")
	}
	b, err := asn1tree.Parse(base)
	if err != nil {
		return fmt.Errorf("-base: %w", err)
	}
	legacy := strings.HasSuffix(file, ".json") // the whole-file log of earlier versions
	jf := file
	if legacy {
		jf = "" // built in memory, written below
	}
	l, err := notiflog.Open(jf, n, 0, nil, nil)
	if err != nil {
		return err
	}
	def := hotset.Def{Name: "storm", GrandParent: "DDS/Storm", Stat: "load", Threshold: 50, MaxResp: 1, Severity: 1, TrapNo: 5,
		Frequency: hotset.MinFrequency, Feed: hotset.FeedThreshold, Excp: hotset.ExcpBoth}
	for i := range n {
		set := fmt.Sprintf("DDS/Storm/seed%d/", i)
		ev := hotset.Event{Def: def, Parent: set, Time: time.Now(), Items: []hotset.Item{{Name: "p", Path: set + "p/load",
			OID: b.Append(99, 7, uint32(i), 1, 1), Value: 90, Served: asn1tree.Gauge(90)}}}
		nt, err := daemon.Notification(b, ev, time.Duration(i)*time.Millisecond)
		if err != nil {
			return err
		}
		vals, oids := make([]asn1tree.Value, len(nt.Vars)), make([]asn1tree.OID, len(nt.Vars))
		for j, v := range nt.Vars {
			vals[j], oids[j] = v.Value, v.OID
		}
		idx := l.Add(nt.Uptime, nt.TrapOID(), vals, oids)
		l.Outcome(idx, "127.0.0.1:162", true, "sent (unconfirmed)")
	}
	if legacy {
		v := l.View()
		b, err := json.Marshal(struct {
			Next    uint32           `json:"next"`
			Entries []notiflog.Entry `json:"entries"`
		}{v.Next, v.Entries})
		if err == nil {
			err = os.WriteFile(file, b, 0o600)
		}
		if err != nil {
			return err
		}
	}
	if err := l.Close(); err != nil {
		return err
	}
	fmt.Printf("stormload: %d notifications in %s\n", n, file)
	return nil
}
