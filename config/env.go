package config

import (
	"fmt"
	"slices"
	"strings"
)

// EnvPrefix starts every environment variable of the project.
const EnvPrefix = "SUBAGENT_"

// EnvVar is a SUBAGENT_* variable read outside Load's keys, or by more
// than the daemon.
type EnvVar struct {
	Name   string
	Key    string // the setting it also is, if any
	ReadBy string
}

// OtherEnv is the one list of SUBAGENT_* variables that something other
// than a setting reads. Load accepts these and SUBAGENT_ + every key; any
// other SUBAGENT_* variable is a typing error it refuses, as it refuses an
// unknown key in a file. Add a variable here when a program, library,
// script or test starts reading one (TestEveryEnvNameInTheTreeIsAccepted
// finds them in the tree).
var OtherEnv = []EnvVar{
	{Name: "SUBAGENT_CONFIG", ReadBy: "Load: the configuration file when --config is not given"},
	{Name: "SUBAGENT_RUN_DIR", Key: "run_dir", ReadBy: "the client module (rundir: ddsclient, arm), the consumer package, libSpmi and libarm"},
	{Name: "SUBAGENT_DDS_SOCKET", Key: "dds.socket", ReadBy: "ddsclient and libSpmi"},
	{Name: "SUBAGENT_TEST_MODE", ReadBy: "cmd/subagent's test binary, run as a helper program"},
	{Name: "SUBAGENT_ARGS", ReadBy: "scripts/bench-walk.sh and bench-walk-ab.sh: more daemon flags"},
	{Name: "SUBAGENT_C_SANITIZE", ReadBy: "the C tests (internal/csan): build libSpmi, libarm and their C programs with -fsanitize=VALUE (scripts/run-tests.sh)"},
}

// EnvName is the variable that sets key: SUBAGENT_SNMP_COMMUNITY for
// snmp.community.
func EnvName(key string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// checkEnv refuses the SUBAGENT_* variables of environ that set none of
// keys and are not in OtherEnv, naming the nearest accepted one.
func checkEnv(environ, keys []string) []error {
	accepted := map[string]bool{}
	var names, others []string // names without the prefix, for the hints
	add := func(name string) {
		if !accepted[name] {
			accepted[name] = true
			names = append(names, strings.TrimPrefix(name, EnvPrefix))
		}
	}
	for _, k := range keys {
		add(EnvName(k))
	}
	for _, v := range OtherEnv {
		add(v.Name)
		if v.Key == "" {
			others = append(others, v.Name)
		}
	}
	slices.Sort(names)
	slices.Sort(others)
	var errs []error
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, EnvPrefix) || accepted[name] {
			continue
		}
		accepted[name] = true // once, should it appear twice
		msg := "unknown environment variable " + name
		if near := nearest(strings.ToUpper(strings.TrimPrefix(name, EnvPrefix)), names); near != "" {
			msg += ": did you mean " + EnvPrefix + near + "?"
		}
		errs = append(errs, fmt.Errorf("%s (a variable is %s and a key in upper case, dots as underscores, or one of %s)",
			msg, EnvPrefix, strings.Join(others, ", ")))
	}
	return errs
}
