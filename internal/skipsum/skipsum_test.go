package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A module with a passing, a failing and two skipping tests, run by the
// real `go test -json`: the filter prints what go test without -v would
// (the failure, the package results, no "=== RUN"), records both skips
// with their reasons, and the summary lists them.
func TestFilterAndSummaryOfRealGoTest(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.org/m\n\ngo 1.22\n")
	write("m_test.go", `package m

import "testing"

func TestPasses(t *testing.T) { t.Log("quiet") }
func TestFails(t *testing.T)  { t.Error("it broke") }
func TestNeedsRoot(t *testing.T) { t.Skip("needs root") }
func TestSub(t *testing.T) {
	t.Run("v6", func(t *testing.T) { t.Logf("tried ::1"); t.Skipf("no IPv6 loopback") })
}
`)
	cmd := exec.Command("go", "test", "-json", "-count=1", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off")
	js, _ := cmd.Output() // fails: TestFails
	var out bytes.Buffer
	skips, err := filter(bytes.NewReader(js), &out)
	if err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"--- FAIL: TestFails", "it broke", "FAIL\texample.org/m"} {
		if !strings.Contains(got, want) {
			t.Errorf("filter output lacks %q:\n%s", want, got)
		}
	}
	for _, not := range []string{"=== RUN", "quiet", "TestPasses", "--- SKIP", "\nPASS\n"} {
		if strings.Contains(got, not) {
			t.Errorf("filter output has %q, which go test without -v does not print:\n%s", not, got)
		}
	}
	want := []Skip{{"example.org/m", "TestNeedsRoot", "m_test.go:7: needs root"},
		{"example.org/m", "TestSub/v6", "m_test.go:9: tried ::1 m_test.go:9: no IPv6 loopback"}}
	if len(skips) != len(want) || skips[0] != want[0] || skips[1] != want[1] {
		t.Fatalf("skips %+v\nwant %+v", skips, want)
	}

	// Not strict: listed, no error.
	out.Reset()
	if err := summary(skips, nil, false, "", &out); err != nil || !strings.Contains(out.String(), "==> skipped tests: 2\n  example.org/m TestNeedsRoot: m_test.go:7: needs root\n") {
		t.Errorf("summary: %v\n%s", err, out.String())
	}
	// Strict: the skip not allowed fails, naming it and the file.
	out.Reset()
	err = summary(skips, map[string]string{"example.org/m TestSub/v6": "no IPv6 in containers"}, true, ".ci/allowed-skips", &out)
	if err == nil || !strings.Contains(err.Error(), "1 skipped tests are not allowed in CI") || !strings.Contains(err.Error(), "example.org/m TestNeedsRoot") ||
		!strings.Contains(out.String(), "TestNeedsRoot: m_test.go:7: needs root  [not allowed]") || strings.Contains(out.String(), "v6: m_test.go:9: tried ::1 m_test.go:9: no IPv6 loopback  [not") {
		t.Errorf("strict summary: %v\n%s", err, out.String())
	}
	out.Reset()
	if err := summary(nil, nil, true, "", &out); err != nil || out.String() != "==> skipped tests: none\n" {
		t.Errorf("no skips: %v %q", err, out.String())
	}
}

// An allowed list gives a reason for every entry; the shipped one parses.
func TestAllowedFile(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "allowed")
	os.WriteFile(bad, []byte("# comment\nexample.org/m TestX\n"), 0o644)
	if _, err := readAllowed(bad); err == nil || !strings.Contains(err.Error(), ":2: want \"package test reason\"") {
		t.Errorf("an entry without a reason: %v", err)
	}
	if _, err := readAllowed("../../.ci/allowed-skips"); err != nil {
		t.Errorf("the shipped list: %v", err)
	}
}
