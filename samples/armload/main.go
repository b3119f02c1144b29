// Command armload is the Go equivalent of libarm's load program: N
// goroutines x M transactions through package arm, with a counter, a
// gauge and the string field, then one aborted and two failed instances
// per goroutine. Usage: armload THREADS EACH
//
// armload -for DURATION runs Start/Stop pairs of "Go Pair"/"pair" on one
// goroutine in a tight loop for that long and prints "pairs <count>".
//
// Either way it first waits up to ARM_CONNECT_WAIT seconds (5 when unset)
// for the daemon to register it.
package main

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/perfagent/subagent/client/arm"
)

func main() {
	if len(os.Args) == 3 && os.Args[1] == "-for" {
		tight(os.Args[2])
		return
	}
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: armload THREADS EACH")
		os.Exit(2)
	}
	threads, _ := strconv.Atoi(os.Args[1])
	each, _ := strconv.Atoi(os.Args[2])
	ag := open()
	defer ag.Close()
	app := ag.App("Go Load Test", "*")
	tr := app.Transaction("Load Transaction", "many goroutines",
		arm.Metric{Field: 1, Type: arm.Counter32, Name: "records written"},
		arm.Metric{Field: 2, Type: arm.Gauge32, Name: "queue length"},
		arm.Metric{Field: 7, Type: arm.String32, Name: "part number"})
	var wg sync.WaitGroup
	for n := range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				h := tr.Start()
				h.Set(1, 1000)
				h.Set(2, uint64(n+i%5))
				h.Set(1, 1002)
				h.SetString("part-42")
				h.Stop(arm.Good)
			}
			for _, s := range []arm.Status{arm.Abort, arm.Failed, arm.Failed} {
				h := tr.Start()
				h.Stop(s)
			}
		}()
	}
	wg.Wait()
	app.End()
	fmt.Println("done", threads*each, "connected", ag.Connected())
}

func tight(span string) {
	d, err := time.ParseDuration(span)
	if err != nil {
		fmt.Fprintln(os.Stderr, "armload -for:", err)
		os.Exit(2)
	}
	ag := open()
	defer ag.Close()
	app := ag.App("Go Pair", "")
	tr := app.Transaction("pair", "")
	pairs := 0
	for end := time.Now().Add(d); time.Now().Before(end); pairs += 4096 {
		for range 4096 {
			h := tr.Start()
			h.Stop(arm.Good)
		}
	}
	app.End()
	fmt.Println("pairs", pairs, "connected", ag.Connected())
}

// open registers with the daemon, waiting for its answer: ARM_CONNECT_WAIT
// when set (Options.Wait 0 reads it), else 5 s.
func open() *arm.Agent {
	var opts arm.Options
	if os.Getenv("ARM_CONNECT_WAIT") == "" {
		opts.Wait = 5 * time.Second
	}
	return arm.Open(&opts)
}
