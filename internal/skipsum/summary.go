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

func runSummary(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("summary", flag.ContinueOnError)
	logFile := fs.String("log", "", "the skipped tests filter recorded")
	allowedFile := fs.String("allowed", "", `the skips allowed with -strict: "package test reason" a line, # comments`)
	strict := fs.Bool("strict", false, "fail on a skip the allowed file does not list (CI)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	skips, err := readLog(*logFile)
	if err != nil {
		return err
	}
	allowed := map[string]string{}
	if *allowedFile != "" {
		if allowed, err = readAllowed(*allowedFile); err != nil {
			return err
		}
	}
	return summary(skips, allowed, *strict, *allowedFile, out)
}

func readLog(name string) ([]Skip, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var skips []Skip
	for i, l := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		var s Skip
		if err := json.Unmarshal([]byte(l), &s); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, i+1, err)
		}
		skips = append(skips, s)
	}
	return skips, nil
}

// readAllowed reads "package test reason" lines; a line without a reason
// is an error: the file says why each skip is accepted.
func readAllowed(name string) (map[string]string, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m := map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		f := strings.Fields(l)
		if len(f) < 3 {
			return nil, fmt.Errorf("%s:%d: want \"package test reason\", got %q", name, n, l)
		}
		m[f[0]+" "+f[1]] = strings.Join(f[2:], " ")
	}
	return m, sc.Err()
}

// summary lists every skip with its reason; strict fails on one the
// allowed list does not name.
func summary(skips []Skip, allowed map[string]string, strict bool, allowedFile string, out io.Writer) error {
	if len(skips) == 0 {
		fmt.Fprintln(out, "==> skipped tests: none")
		return nil
	}
	fmt.Fprintf(out, "==> skipped tests: %d\n", len(skips))
	var refused []string
	for _, s := range skips {
		mark := ""
		if _, ok := allowed[s.Package+" "+s.Test]; !ok && strict {
			mark = "  [not allowed]"
			refused = append(refused, s.Package+" "+s.Test)
		}
		reason := s.Reason
		if reason == "" {
			reason = "(no reason given)"
		}
		fmt.Fprintf(out, "  %s %s: %s%s\n", s.Package, s.Test, reason, mark)
	}
	if len(refused) > 0 {
		return fmt.Errorf("%d skipped tests are not allowed in CI (CI=true); make them run, or list each in %s with the reason it may skip: %s",
			len(refused), allowedFile, strings.Join(refused, ", "))
	}
	return nil
}
