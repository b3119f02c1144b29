package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action     string
	Package    string
	ImportPath string // build-output, build-fail
	Test       string
	Output     string
}

// Skip is one skipped test as the log records it.
type Skip struct {
	Package string `json:"package"`
	Test    string `json:"test"`
	Reason  string `json:"reason"`
}

func runFilter(args []string, in io.Reader, out io.Writer) error {
	fs := flag.NewFlagSet("filter", flag.ContinueOnError)
	logFile := fs.String("log", "", "file the skipped tests are appended to, one JSON object a line")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *logFile == "" {
		return fmt.Errorf("filter: -log is required")
	}
	f, err := os.OpenFile(*logFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	w := bufio.NewWriter(out)
	defer w.Flush()
	skips, err := filter(in, w)
	enc := json.NewEncoder(f)
	for _, s := range skips {
		if e := enc.Encode(s); e != nil && err == nil {
			err = e
		}
	}
	return err
}

// filter writes what `go test` without -v would print: every package's
// own lines but "PASS", and the output of each test that failed or never
// finished (a panic, a timeout). It returns the skipped tests.
func filter(in io.Reader, w io.Writer) ([]Skip, error) {
	type key struct{ pkg, test string }
	buf := map[key]*strings.Builder{}
	var order []key // tests in the order they started, to flush the unfinished
	var skips []Skip
	flush := func(pkg string) {
		for _, k := range order {
			if b := buf[k]; b != nil && k.pkg == pkg {
				io.WriteString(w, shown(b.String()))
				delete(buf, k)
			}
		}
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		var e event
		if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &e) != nil {
			fmt.Fprintln(w, line) // not test2json's: as it is
			continue
		}
		k := key{e.Package, e.Test}
		switch {
		case e.Action == "build-output":
			io.WriteString(w, e.Output)
		case e.Test == "" && e.Action == "output":
			if e.Output != "PASS\n" {
				io.WriteString(w, e.Output)
			}
		case e.Test == "" && (e.Action == "fail" || e.Action == "pass" || e.Action == "skip"):
			flush(e.Package) // tests a crash left unfinished
		case e.Action == "run":
			buf[k] = &strings.Builder{}
			order = append(order, k)
		case e.Action == "output":
			if buf[k] == nil {
				buf[k] = &strings.Builder{}
				order = append(order, k)
			}
			buf[k].WriteString(e.Output)
		case e.Action == "fail":
			if b := buf[k]; b != nil {
				io.WriteString(w, shown(b.String()))
			}
			delete(buf, k)
		case e.Action == "skip":
			reason := ""
			if b := buf[k]; b != nil {
				reason = skipReason(b.String())
			}
			skips = append(skips, Skip{Package: e.Package, Test: e.Test, Reason: reason})
			delete(buf, k)
		case e.Action == "pass":
			delete(buf, k)
		}
	}
	for _, k := range order {
		if b := buf[k]; b != nil {
			io.WriteString(w, shown(b.String()))
		}
	}
	return skips, sc.Err()
}

// shown drops the -v markers go test without -v does not print.
func shown(s string) string {
	var sb strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if t := strings.TrimSpace(l); !strings.HasPrefix(t, "=== ") {
			sb.WriteString(l)
		}
	}
	return sb.String()
}

// skipReason is what a skipped test said, its log lines joined, without
// the "--- SKIP" line.
func skipReason(s string) string {
	var parts []string
	for _, l := range strings.Split(s, "\n") {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		parts = append(parts, t)
	}
	return strings.Join(parts, " ")
}
