package config

import (
	"fmt"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// yamlPrefix is the position yaml.v3 puts before its message: the line
// where the enclosing block starts, often far above the mistake (a list
// item under "key: []" is reported at the file's first key).
var yamlPrefix = regexp.MustCompile(`^yaml: (line \d+: )?`)

// checkSyntax parses a configuration file as YAML. Its error names the
// first line the file cannot be read past: the file up to the line before
// it parses, and with it no longer does.
func checkSyntax(b []byte) error {
	var n yaml.Node
	err := yaml.Unmarshal(b, &n)
	if err == nil {
		return nil
	}
	lines := strings.SplitAfter(string(b), "\n")
	good := 0 // the longest prefix, in lines, that parses
	for k := len(lines) - 1; k > 0; k-- {
		if yaml.Unmarshal([]byte(strings.Join(lines[:k], "")), &n) == nil {
			good = k
			break
		}
	}
	if good >= len(lines) {
		good = len(lines) - 1
	}
	return fmt.Errorf("line %d: %s: %q", good+1, yamlPrefix.ReplaceAllString(err.Error(), ""),
		strings.TrimRight(lines[good], "\r\n"))
}
