#!/usr/bin/env bash
# The test phases of `make test`, each announced as it starts: the daemon's
# module and the client module with -race, the C libraries' tests under
# ASan and UBSan, the expression parser's fuzz budget, then the 32-bit
# codecs. A
# watcher fails the run when anything appears in the system's places
# (/run/subagent, /var/lib/subagent, /tmp/subagent-*) while it runs: tests
# write only in their own temporary directories.
#
# Every phase runs even when an earlier one failed; the run then fails at
# the end, naming the phases that failed.
#
# RUN_386=no checks the 32-bit layout without running 386 programs, as on a
# kernel that cannot (to try that path on a machine that can).
set -uo pipefail
cd "$(dirname "$0")/.."
[ -n "${SKIPS_LOG:-}" ] || exec bash scripts/skips.sh bash scripts/run-tests.sh "$@" # skipped tests listed at the end
GO=${GO:-go}

step() { printf '==> %s\n' "$*"; }

failed=()
# phase NAME COMMAND...: runs COMMAND, remembering NAME when it fails.
phase() {
	local name=$1
	shift
	if ! "$@"; then
		failed+=("$name")
		printf '==> FAILED: %s\n' "$name" >&2
	fi
}

watched() { ls -d /run/subagent /var/lib/subagent /tmp/subagent-* 2>/dev/null || true; }
before=$(watched)
seen=$(mktemp -d)
# Polls while this script runs; it stops by itself when the script is gone.
(
	while kill -0 $$ 2>/dev/null; do
		watched >>"$seen/paths"
		sleep 0.2
	done
) &
watcher=$!
trap 'kill $watcher 2>/dev/null || true; rm -rf "$seen"' EXIT

step "go test -race: the daemon's module (about 5 minutes; snmpd, snmptrapd and snmp_exporter run on loopback)"
phase "the daemon's module (go test -race ./...)" "$GO" test -race -count=1 -timeout 30m ./...
step "go test -race: the client module (client/)"
clientTests() { (cd client && "$GO" test -race -count=1 -timeout 10m ./...); }
phase "the client module (cd client && go test -race ./...)" clientTests

# The C libraries' tests once more, with libSpmi, libarm and every C
# program those tests run built under AddressSanitizer and UBSan
# (internal/csan): a finding aborts the program, and every report also goes
# to a log that fails the phase, even where a test does not look at how a
# program ended (a fuzz test's driver). The Go side ran under -race above,
# as did two tests left out here: TestBatchesSurviveExitFromSignalHandler,
# which builds its own ASan and TSan copies, and
# TestCStatSetOfTwentyThousand, the daemon's scale (2 minutes under ASan;
# the library's paths it runs, the smaller statset tests run here too).
sanitized() {
	local logs=$seen/sanitizers rc=0
	mkdir -p "$logs"
	SUBAGENT_C_SANITIZE=address,undefined \
		ASAN_OPTIONS="log_path=$logs/asan" UBSAN_OPTIONS="log_path=$logs/ubsan:print_stacktrace=1" \
		"$GO" test -count=1 -timeout 15m -skip '^(TestBatchesSurviveExitFromSignalHandler|TestCStatSetOfTwentyThousand)$' ./libspmi/ ./libarm/ || rc=1
	if [ -n "$(ls -A "$logs")" ]; then
		echo "make test: the sanitizers reported these in the C programs of the tests:" >&2
		cat "$logs"/* >&2
		rc=1
	fi
	return $rc
}
step "C sanitizers: the tests of libSpmi and libarm again (all but TestBatchesSurviveExitFromSignalHandler and TestCStatSetOfTwentyThousand, run above), the libraries and their C programs built with -fsanitize=address,undefined (about 3 minutes)"
phase "the C libraries under ASan and UBSan (SUBAGENT_C_SANITIZE=address,undefined go test ./libspmi/ ./libarm/)" sanitized

# The expression parser's fuzz budget: one minute of new inputs, past the
# seeds that the module's go test ran above (expr/fuzz_test.go).
step "fuzz: the expression parser, 1 minute (FuzzParse: no panic, no evaluation beyond its bound)"
phase "fuzz: the expression parser (go test ./expr/ -fuzz FuzzParse)" "$GO" test -count=1 -run '^$' -fuzz '^FuzzParse$' -fuzztime 1m ./expr/

# 32-bit suppliers share the file layout: the codecs on 386 too, run when
# this kernel runs 386 programs (some 64-bit kernels have IA32 emulation
# off, arm64 has none), otherwise built and checked at compile time.
printf 'package main\n\nfunc main() {}\n' >"$seen/probe.go"
runs386=no
if [ "${RUN_386:-}" != no ] && GOARCH=386 "$GO" build -o "$seen/probe" "$seen/probe.go" && "$seen/probe" 2>/dev/null; then
	runs386=yes
fi
run386() {
	GOARCH=386 "$GO" test -count=1 ./dds/ &&
		(cd client && GOARCH=386 "$GO" test -count=1 ./ddswire/ ./ddsclient/)
}
check386() {
	GOARCH=386 "$GO" vet ./dds/ &&
		GOARCH=386 "$GO" test -c -o "$seen/dds.test" ./dds/ &&
		(cd client && GOARCH=386 "$GO" vet ./ddswire/ ./ddsclient/ &&
			GOARCH=386 "$GO" test -c -o "$seen/ddswire.test" ./ddswire/ &&
			GOARCH=386 "$GO" test -c -o "$seen/ddsclient.test" ./ddsclient/)
}
if [ $runs386 = yes ]; then
	step "32-bit: the DDS codecs' tests as 386 programs"
	phase "32-bit: the DDS codecs' tests as 386 programs" run386
else
	step "32-bit: 386 programs do not run here (or RUN_386=no); instead: go vet and the test binaries of dds, ddswire and ddsclient built for 386, with SpmiShare's layout checked as they compile (client/ddswire/layout.go)"
	phase "32-bit: the DDS codecs checked for 386" check386
fi

kill $watcher 2>/dev/null || true
wait $watcher 2>/dev/null || true
appeared=$({ sort -u "$seen/paths" 2>/dev/null; watched; } | sort -u | grep -vxF -f <(printf '%s\n' "$before") || true)
if [ -n "$appeared" ]; then
	echo "make test: these appeared during the run; tests must write only in their own temporary directories:" >&2
	printf '  %s\n' $appeared >&2
	# The run made them: remove what is left so that the next run starts clean.
	for p in $appeared; do rm -rf -- "$p"; done
	failed+=("nothing in the system's places (/run/subagent, /var/lib/subagent, /tmp/subagent-*)")
fi
if [ ${#failed[@]} -gt 0 ]; then
	printf 'make test: %d phase(s) failed:\n' ${#failed[@]} >&2
	printf '  %s\n' "${failed[@]}" >&2
	exit 1
fi
step "all tests passed; nothing was left in /run/subagent, /var/lib/subagent or /tmp/subagent-*"
