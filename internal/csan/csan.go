// Package csan says which sanitizers the tests of the C libraries (libspmi,
// libarm) build them and their programs under: none, or those of
// $SUBAGENT_C_SANITIZE, which make test's sanitizer phase sets to
// "address,undefined" (scripts/run-tests.sh).
package csan

import "os"

// Env names the environment variable: sanitizers as -fsanitize takes
// them; unset or empty, none.
const Env = "SUBAGENT_C_SANITIZE"

// Flags are the compiler and linker flags of the sanitizers san (""
// none): a finding aborts the program, with its stack.
func Flags(san string) []string {
	if san == "" {
		return nil
	}
	return []string{"-fsanitize=" + san, "-fno-sanitize-recover=all", "-fno-omit-frame-pointer", "-g"}
}

// FromEnv are the Flags of $SUBAGENT_C_SANITIZE.
func FromEnv() []string { return Flags(os.Getenv(Env)) }
