#!/usr/bin/env bash
# skips.sh COMMAND...: runs COMMAND (scripts/run-tests.sh) with every
# `$GO test` in it run as `go test -json` through internal/skipsum, which
# prints what go test without -v would and records each skipped test with
# its reason; then lists them all. In CI (CI=true) a skip fails the run
# unless .ci/allowed-skips lists it with the reason it may skip there.
# `$GO test -c` and every other go command run as they are.
set -uo pipefail
if [ "${1:-}" = --go ]; then # as $GO, under the run below
	shift
	if [ "${1:-}" = test ] && ! printf '%s\n' "$@" | grep -qx -- -c; then
		shift
		"$SKIPS_REAL_GO" test -json "$@" | "$SKIPS_SUM" filter -log "$SKIPS_LOG"
		exit # go test's status (pipefail), or the filter's
	fi
	exec "$SKIPS_REAL_GO" "$@"
fi
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
real=$(command -v "${GO:-go}") || { echo "skips.sh: no ${GO:-go}" >&2; exit 1; }
"$real" build -o "$tmp/skipsum" ./internal/skipsum || exit 1
printf '#!/bin/sh\nexec bash %q --go "$@"\n' "$PWD/scripts/skips.sh" >"$tmp/go"
chmod +x "$tmp/go"
: >"$tmp/skips.jsonl"
SKIPS_REAL_GO=$real SKIPS_SUM=$tmp/skipsum SKIPS_LOG=$tmp/skips.jsonl GO=$tmp/go "$@"
rc=$?
strict=
if [ "${CI:-}" = true ]; then strict=-strict; fi
"$tmp/skipsum" summary -log "$tmp/skips.jsonl" -allowed .ci/allowed-skips $strict || { [ $rc -ne 0 ] || rc=1; }
exit $rc
