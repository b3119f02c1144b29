package config

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// A misspelled variable stops the load with the nearest name, as a
// misspelled key in a file does; a wrongly cased one too; with nothing
// near, the message says what the names are.
func TestUnknownEnvIsRefused(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"SUBAGENT_SNMP_COMUNITY", "unknown environment variable SUBAGENT_SNMP_COMUNITY: did you mean SUBAGENT_SNMP_COMMUNITY? ("},
		{"SUBAGENT_Log_Level", "unknown environment variable SUBAGENT_Log_Level: did you mean SUBAGENT_LOG_LEVEL? ("},
		{"SUBAGENT_ZZZZZZZZZZZZ", "unknown environment variable SUBAGENT_ZZZZZZZZZZZZ (a variable is SUBAGENT_ and a key in upper case, dots as underscores, or one of SUBAGENT_ARGS, SUBAGENT_CONFIG, SUBAGENT_C_SANITIZE, SUBAGENT_TEST_MODE)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(c.name, "x")
			if _, err := load(t, ""); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v\nwant it to contain %q", err, c.want)
			}
		})
	}
}

// Every variable of OtherEnv and every key's variable loads.
func TestKnownEnvIsAccepted(t *testing.T) {
	for _, v := range OtherEnv {
		t.Setenv(v.Name, "")
	}
	t.Setenv("SUBAGENT_TEST_MODE", "anything")
	t.Setenv("SUBAGENT_ARGS", "--log-level warn")
	t.Setenv(EnvName("snmp.community"), "fromenv")
	t.Setenv(EnvName("arm.max_processes_per_uid"), "12")
	c, err := load(t, "")
	if err != nil {
		t.Fatal(err)
	}
	if c.SNMP.Community != "fromenv" || c.ARM.MaxProcessesPerUID != 12 {
		t.Fatalf("community %q, arm.max_processes_per_uid %d", c.SNMP.Community, c.ARM.MaxProcessesPerUID)
	}
	schema := configSchema()
	for _, v := range OtherEnv {
		if _, ok := schema.types[v.Key]; v.Key != "" && (!ok || EnvName(v.Key) != v.Name) {
			t.Errorf("%s is listed as the key %q, which it does not set", v.Name, v.Key)
		}
	}
}

// deliberatelyUnknown are the misspellings that tests and documents use
// to show the refusal.
var deliberatelyUnknown = []string{"SUBAGENT_SNMP_COMUNITY", "SUBAGENT_ZZZZZZZZZZZZ", "SUBAGENT_Log_Level"}

// Every SUBAGENT_* name written anywhere in the tree (Go, C, scripts,
// documents) is accepted: a client, library, script or test that reads a
// new one must add it to OtherEnv, or the daemon would refuse to start
// beside it.
func TestEveryEnvNameInTheTreeIsAccepted(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	name := regexp.MustCompile(`SUBAGENT_[A-Za-z0-9_]+`)
	found := map[string]string{} // name -> a file that has it
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (n == "bin" || strings.HasPrefix(n, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".go", ".c", ".h", ".sh", ".md", ".yaml", ".yml", ".in", ".conf", ".service":
		default:
			if d.Name() != "Makefile" {
				return nil
			}
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, n := range name.FindAllString(string(b), -1) {
			// A prefix (SUBAGENT_ARM_ in a filter) names no variable.
			if !strings.HasSuffix(n, "_") && !slices.Contains(deliberatelyUnknown, n) {
				found[n] = path
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, must := range []string{"SUBAGENT_CONFIG", "SUBAGENT_RUN_DIR", "SUBAGENT_DDS_SOCKET", "SUBAGENT_TEST_MODE"} {
		if found[must] == "" {
			t.Fatalf("the walk of %s did not find %s: it does not read the tree", root, must)
		}
	}
	for n := range found {
		t.Setenv(n, "") // empty: accepted names change no setting
	}
	if _, err := load(t, ""); err != nil {
		for n, path := range found {
			if strings.Contains(err.Error(), "variable "+n+" ") || strings.Contains(err.Error(), "variable "+n+":") {
				t.Errorf("%s (in %s) is refused: add it to OtherEnv", n, path)
			}
		}
		t.Fatal(err)
	}
}
