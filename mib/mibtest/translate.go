package mibtest

import (
	"regexp"
	"strings"
	"testing"
)

// batch is how many arguments go to one snmptranslate call.
const batch = 400

// Translate runs snmptranslate with module loaded from dirs on every
// argument (in batches) and returns one answer per argument. Any message
// on stderr, such as a parse error of the module or an unknown name,
// fails the test.
func Translate(t testing.TB, env, dirs []string, module string, flags, args []string) []string {
	t.Helper()
	var out []string
	for len(args) > 0 {
		n := min(batch, len(args))
		cmd := append([]string{"-M", strings.Join(dirs, ":"), "-m", module}, flags...)
		stdout, stderr, err := Run(t, env, "snmptranslate", append(cmd, args[:n]...)...)
		if err != nil || strings.TrimSpace(stderr) != "" {
			t.Fatalf("snmptranslate %s ...: %v\n%s", strings.Join(cmd, " "), err, stderr)
		}
		var got []string
		for _, l := range strings.Split(stdout, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				got = append(got, l)
			}
		}
		if len(got) != n {
			t.Fatalf("snmptranslate gave %d answers for %d arguments:\n%s", len(got), n, stdout)
		}
		out = append(out, got...)
		args = args[n:]
	}
	return out
}

// Definition is what snmptranslate -Td shows of one object.
type Definition struct {
	Macro, TC, Syntax, Hint, Units, Access string
}

var labelRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9-]*::[A-Za-z][A-Za-z0-9]*$`)

// Describe runs snmptranslate -Td on names ("MODULE::descriptor") and
// returns their definitions by name.
func Describe(t testing.TB, env, dirs []string, module string, names []string) map[string]Definition {
	t.Helper()
	out := map[string]Definition{}
	for len(names) > 0 {
		n := min(batch, len(names))
		args := append([]string{"-M", strings.Join(dirs, ":"), "-m", module, "-Td"}, names[:n]...)
		stdout, stderr, err := Run(t, env, "snmptranslate", args...)
		if err != nil || strings.TrimSpace(stderr) != "" {
			t.Fatalf("snmptranslate -Td: %v\n%s", err, stderr)
		}
		var cur string
		var d Definition
		flush := func() {
			if cur != "" {
				out[cur] = d
			}
		}
		for _, l := range strings.Split(stdout, "\n") {
			switch f := strings.Fields(l); {
			case labelRE.MatchString(l):
				flush()
				cur, d = l, Definition{}
			case len(f) == 2 && strings.HasSuffix(cur, "::"+f[0]):
				d.Macro = f[1]
			case len(f) == 4 && f[0] == "--" && f[1] == "TEXTUAL": // -- TEXTUAL CONVENTION Name
				d.TC = f[3]
			case len(f) >= 2 && f[0] == "SYNTAX":
				d.Syntax = strings.Join(f[1:], " ")
			case len(f) == 2 && f[0] == "DISPLAY-HINT":
				d.Hint = strings.Trim(f[1], `"`)
			case len(f) >= 2 && f[0] == "UNITS":
				d.Units = strings.Trim(strings.Join(f[1:], " "), `"`)
			case len(f) == 2 && f[0] == "MAX-ACCESS":
				d.Access = f[1]
			}
		}
		flush()
		names = names[n:]
	}
	return out
}
