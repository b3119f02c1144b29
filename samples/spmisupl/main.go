// Command spmisupl is the SPMI guide's two sample Dynamic Data Suppliers
// written with the Go library (client/ddsclient): DDS/IBM/Test with
// gadgets and widgets, DDS/IBM/Moretest/SubTest with level and queue,
// updated as the guide's SpmiSupl1.c does, and (with -volatile) the
// volatile context DDS/IBM/Moretest/Bingo of SpmiSupl.c, added and later
// deleted while it runs. The C originals are in samples/spmi.
// -vendor puts the same tables under another DDS/<vendor>, so that this
// sample and the C one (DDS/IBM) run side by side.
//
//	make dds-samples && bin/spmisupl -vendor Sample -asn 32473 -volatile
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/perfagent/subagent/client/ddsclient"
)

func main() {
	file := flag.String("file", filepath.Join(os.TempDir(), fmt.Sprintf("SpmiSupl-%d.shm", os.Getuid())), "shared memory file")
	socket := flag.String("socket", "", "daemon socket (default: dds.sock in $SUBAGENT_RUN_DIR or the default run directory)")
	period := flag.Duration("period", 499*time.Millisecond, "time between updates while nobody reads the values")
	volatile := flag.Bool("volatile", false, "add DDS/IBM/Moretest/Bingo while running, as SpmiSupl.c does")
	addAfter := flag.Duration("add-after", 0, "with -volatile: add Bingo this long after start")
	delAfter := flag.Duration("del-after", 0, "with -volatile: delete Bingo this long after start (0: never)")
	vendor := flag.String("vendor", "IBM", "the vendor context: DDS/<vendor>")
	asn := flag.Uint("asn", 2, "the vendor's number (its enterprise number): DDS/<vendor> is base.99.<asn>")
	wait := flag.Duration("wait", 10*time.Second, "wait up to this long for the daemon (started with this sample)")
	flag.Parse()
	v := vendorTables{name: *vendor, asn: uint32(*asn)}
	if err := run(v, *file, *socket, *period, *volatile, *addAfter, *delAfter, *wait); err != nil {
		fmt.Fprintln(os.Stderr, "spmisupl:", err)
		os.Exit(1)
	}
}

type vendorTables struct {
	name string
	asn  uint32
}

func run(vt vendorTables, file, socket string, period time.Duration, volatile bool, addAfter, delAfter, wait time.Duration) error {
	descr := "IBM-defined Dynamic Data-Suppliers"
	if vt.name != "IBM" {
		descr = "The SPMI guide's sample supplier, in Go"
	}
	v := ddsclient.NewVendor(vt.name, descr, vt.asn)
	test := v.Context("Test", "Bogus Context Number 1", 220)
	gadgets := test.Counter("gadgets", "Fake counter value", 1, ddsclient.Range(0, 100))
	widgets := test.Counter("widgets", "Another fake counter value", 2, ddsclient.Range(0, 100))
	sub := v.Context("Moretest", "Bogus Context Number 2", 221).Context("SubTest", "Bogus Context Number 3", 222)
	level := sub.Gauge("level", "Fake quantity value", 1, ddsclient.Range(0, 100))
	queue := sub.Gauge("queue", "Another fake quantity value", 2, ddsclient.Range(0, 100))
	inst := v.Template("INST1", "Instantiable Context Number 1")
	problems := inst.Counter("problems", "Fake counter value", 1, ddsclient.Range(0, 100))
	solutions := inst.Counter("solutions", "Another fake counter value", 2, ddsclient.Range(0, 100))

	// A daemon started a moment before has not opened its socket yet.
	s, err := ddsclient.Start(v, file, &ddsclient.Options{Socket: socket, AreaSize: 4096})
	for deadline := time.Now().Add(wait); err != nil && time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
		s, err = ddsclient.Start(v, file, &ddsclient.Options{Socket: socket, AreaSize: 4096})
	}
	if err != nil {
		return err
	}
	defer s.Exit()
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)

	start := time.Now()
	s.Update(func() { gadgets.Set(22); widgets.Set(42); level.Set(28); queue.Set(62) })
	var bingo *ddsclient.Instance
	for !s.GoAway() {
		wait := period
		if s.Subscribers() > 0 && s.Interval() > 0 {
			wait = s.Interval() // as often as somebody reads, no more
		}
		age := time.Since(start)
		switch {
		case volatile && bingo == nil && (delAfter == 0 || age < delAfter):
			wait = min(wait, max(addAfter-age, 0))
		case bingo != nil && delAfter > 0:
			wait = min(wait, max(delAfter-age, 0))
		}
		select {
		case <-stop:
			return nil
		case <-time.After(wait):
		}
		if err := s.Check(); err != nil {
			fmt.Fprintln(os.Stderr, "spmisupl:", err)
		}
		now := time.Now()
		sec := uint64(now.Unix())
		s.Update(func() {
			gadgets.Add(sec & 0xff)
			widgets.Add(sec & 0xf)
			level.Add(int64(sec & 0x20f))
			queue.Add(int64(sec & 0x7f))
		})
		age = now.Sub(start)
		switch {
		case volatile && bingo == nil && age >= addAfter && (delAfter == 0 || age < delAfter):
			if bingo, err = s.AddCx(inst, "DDS/"+vt.name+"/Moretest/Bingo", "Dynamically added", 1); err != nil {
				fmt.Fprintf(os.Stderr, "spmisupl: add failed: %v\n", err)
			}
		case bingo != nil && delAfter > 0 && age >= delAfter:
			if err := s.DelCx(bingo); err != nil {
				fmt.Fprintf(os.Stderr, "spmisupl: delete failed: %v\n", err)
			}
			bingo = nil
		}
		if bingo != nil {
			bingo.Counter(problems).Set(5)
			bingo.Counter(solutions).Set(6)
		}
	}
	return nil
}
