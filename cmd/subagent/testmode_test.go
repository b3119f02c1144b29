package main

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

// The test binary doubles as a helper program that tests run as another
// user: SUBAGENT_TEST_MODE names what it does (testModes), and it exits.
const testModeEnv = "SUBAGENT_TEST_MODE"

var testModes = map[string]func(args []string) int{
	"flood":          flood,
	"armattack":      armAttack,
	"hotsets":        hotsetAttack,   // control_budget_test.go
	"refusedcreates": refusedCreates, // control_budget_test.go
}

func runTestMode(spec string) int {
	f := strings.Fields(spec)
	if do, ok := testModes[f[0]]; ok {
		return do(f[1:])
	}
	fmt.Fprintf(os.Stderr, "unknown %s %q\n", testModeEnv, spec)
	return 2
}

// flood <socket> <connections> <bytes each> <held>: opens the
// connections, writes the bytes on each (no newline), holds them until
// stdin closes, and prints how many connected, how many were answered
// with an error and how many the daemon serves. It waits (at most 30 s)
// until all but <held> connections are answered or closed, then asks each
// remaining one for its status: a connection counts as held only when the
// daemon answers it, so neither a slow daemon nor a loaded machine can be
// mistaken for one that holds connections.
func flood(args []string) int {
	path := args[0]
	n, _ := strconv.Atoi(args[1])
	size, _ := strconv.Atoi(args[2])
	hold, _ := strconv.Atoi(args[3])
	junk := []byte(strings.Repeat("x", 64<<10))
	var conns []net.Conn
	for range n {
		c, err := net.DialTimeout("unix", path, time.Second)
		if err != nil {
			continue
		}
		conns = append(conns, c)
		c.SetWriteDeadline(time.Now().Add(2 * time.Second))
		for sent := 0; sent < size; sent += len(junk) {
			if _, err := c.Write(junk); err != nil {
				break
			}
		}
	}
	// Each reader reports once: an answer (refused or not), a close, or
	// stopped by the deadline set below.
	type outcome struct {
		i                int
		refused, stopped bool
	}
	outcomes := make(chan outcome, len(conns))
	for i, c := range conns {
		go func() {
			line, err := bufio.NewReader(c).ReadString('\n')
			outcomes <- outcome{i, strings.Contains(line, `"err"`), errors.Is(err, os.ErrDeadlineExceeded)}
		}()
	}
	refused, open := 0, make([]bool, len(conns))
	record := func(o outcome) {
		open[o.i] = o.stopped
		if o.refused {
			refused++
		}
	}
	deadline := time.After(30 * time.Second)
	reported := 0
	for waiting := true; waiting && len(conns)-reported > hold; {
		select {
		case o := <-outcomes:
			record(o)
			reported++
		case <-deadline:
			waiting = false
		}
	}
	// Stop the readers still waiting; each reports, then its connection
	// is asked for a status.
	for _, c := range conns {
		c.SetReadDeadline(time.Now())
	}
	for ; reported < len(conns); reported++ {
		record(<-outcomes)
	}
	held := 0
	for i, c := range conns {
		if !open[i] {
			continue
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Write([]byte("{\"op\":\"status\"}\n")); err != nil {
			continue
		}
		if line, err := bufio.NewReader(c).ReadString('\n'); err == nil && strings.Contains(line, `"status"`) {
			held++
		} else if strings.Contains(line, `"err"`) {
			refused++
		}
	}
	fmt.Printf("connected %d answered-with-error %d held %d\n", len(conns), refused, held)
	os.Stdout.Sync()
	bufio.NewReader(os.Stdin).ReadString('\n')
	return 0
}
