package main

import (
	"bufio"
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
	"flood": flood,
}

func runTestMode(spec string) int {
	f := strings.Fields(spec)
	if do, ok := testModes[f[0]]; ok {
		return do(f[1:])
	}
	fmt.Fprintf(os.Stderr, "unknown %s %q\n", testModeEnv, spec)
	return 2
}

// flood <socket> <connections> <bytes each>: opens the connections, writes
// the bytes on each (no newline), holds them until stdin closes, and
// prints how many connected and how many were answered with an error.
func flood(args []string) int {
	path := args[0]
	n, _ := strconv.Atoi(args[1])
	size, _ := strconv.Atoi(args[2])
	junk := []byte(strings.Repeat("x", 64<<10))
	var conns []net.Conn
	connected, refused := 0, 0
	for range n {
		c, err := net.DialTimeout("unix", path, time.Second)
		if err != nil {
			continue
		}
		connected++
		conns = append(conns, c)
		c.SetDeadline(time.Now().Add(2 * time.Second))
		for sent := 0; sent < size; sent += len(junk) {
			if _, err := c.Write(junk); err != nil {
				break
			}
		}
	}
	// Give the daemon time to answer or close every connection; those
	// still open after it are the ones it serves.
	time.Sleep(500 * time.Millisecond)
	held := 0
	for _, c := range conns {
		c.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
		line, err := bufio.NewReader(c).ReadString('\n')
		if strings.Contains(line, `"err"`) {
			refused++
		} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
			held++
		}
	}
	fmt.Printf("connected %d answered-with-error %d held %d\n", connected, refused, held)
	os.Stdout.Sync()
	bufio.NewReader(os.Stdin).ReadString('\n')
	return 0
}
