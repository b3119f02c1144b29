// Command pollage measures what a manager sees of an SNMP agent's values:
// how old they are when it polls, how long its GETs take, what rates two
// snmp_exporter scrapes give, and whether a table walked while processes
// come and go has rows with missing cells. scripts/bench-fresh.sh runs it
// (docs/PERFORMANCE.md, "Fresh values").
//
// The clock is the host's: the sum of the eight CPU times of /proc/stat's
// "cpu" line grows by 100 per second and processor, so a served sum tells
// when it was read: age = (the sum at the moment the GET is sent - the sum
// served) / (100 x processors). A value read after the request was sent
// has a negative age, at most its latency.
//
//	pollage age -period 10s -n 10 standalone=127.0.0.1:1161/subagent native=127.0.0.1:1162/ucd
//	pollage scrape -exporter http://127.0.0.1:9116/snmp -target 127.0.0.1:1161 -load 2
//	pollage holes -walks 20 -churn 50 -- snmptable -v2c -c public ... procPidTable
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "age":
		err = ageMain(os.Args[2:])
	case "scrape":
		err = scrapeMain(os.Args[2:])
	case "holes":
		err = holesMain(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "pollage:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: pollage age|scrape|holes [flags] ... (pollage CMD -h)")
	os.Exit(2)
}
