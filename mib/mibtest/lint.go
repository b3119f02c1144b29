package mibtest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Finding is one message of smilint.
type Finding struct {
	Line  int
	Level int    // 1 severe error .. 6 info; 0 when the line did not parse
	Tag   string // error name, such as node-implicit
	Text  string
}

func (f Finding) String() string {
	return fmt.Sprintf("line %d: [%d] {%s} %s", f.Line, f.Level, f.Tag, f.Text)
}

// IsError reports levels 1 to 3 (errors) and lines that did not parse.
func (f Finding) IsError() bool { return f.Level <= 3 }

var findingRE = regexp.MustCompile(`^.*?:(\d+): \[(\d+)\] \{([A-Za-z0-9-]+)\} (.*)$`)

// Lint runs smilint at its strictest level (9) on file, with only dirs on
// its module path and no configuration file, and returns every line it
// prints, unfiltered (smilint itself reports only on file, plus the odd
// note on a built-in type); a line that does not parse comes back with
// Tag "unparsed". A crash or an unreadable module fails the test.
func Lint(t testing.TB, file string, dirs []string) []Finding {
	t.Helper()
	env := append(os.Environ(), "SMIPATH="+strings.Join(dirs, ":"))
	out, errOut, err := Run(t, env, "smilint", "-c", "/dev/null", "-l", "9", "-s", "-m", file)
	var ee *exec.ExitError
	if err != nil && (!errors.As(err, &ee) || ee.ExitCode() < 0 || ee.ExitCode() > 1) {
		t.Fatalf("smilint %s: %v\n%s%s", file, err, out, errOut)
	}
	var fs []Finding
	for _, line := range strings.Split(out+"\n"+errOut, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		m := findingRE.FindStringSubmatch(line)
		if m == nil {
			fs = append(fs, Finding{Tag: "unparsed", Text: line})
			continue
		}
		n, _ := strconv.Atoi(m[1])
		lvl, _ := strconv.Atoi(m[2])
		fs = append(fs, Finding{Line: n, Level: lvl, Tag: m[3], Text: m[4]})
	}
	return fs
}

// Accepted are the only smilint messages a generated module may carry, by
// tag, with the reason; docs/MIB.md lists them too.
var Accepted = map[string]string{
	// { enterprises 32473 1 }: the arc 32473 belongs to whoever holds that
	// enterprise number, so the module must not define it.
	"node-implicit": "the base's parent arc is not ours to define",
}

// LintClean fails the test on every smilint message but the accepted
// warnings.
func LintClean(t testing.TB, file string, dirs []string) {
	t.Helper()
	for _, f := range Lint(t, file, dirs) {
		if _, ok := Accepted[f.Tag]; ok && !f.IsError() {
			continue
		}
		t.Errorf("smilint %s: %s", filepath.Base(file), f)
	}
}
