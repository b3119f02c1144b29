#!/usr/bin/env bash
# Compares builds of the subagent under one real snmpd master: each build
# serves the whole tree at its own base OID (…32473.1, .2, ...), and the
# builds are bulk-walked alternately, WALKS walks per build per round, so
# that every build meets the same load on the machine. Reported as
# scripts/bench-walk.sh does, with the medians over the rounds last.
# Usage: scripts/bench-walk-ab.sh WALKS ROUNDS NAME=BINARY...
#   e.g. git worktree add /tmp/before <rev> && (cd /tmp/before && go build -o /tmp/before.bin ./cmd/subagent)
#        scripts/bench-walk-ab.sh 30 7 before=/tmp/before.bin after=bin/subagent
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 3 ] || { echo "usage: $0 WALKS ROUNDS NAME=BINARY..." >&2; exit 2; }
WALKS=$1; ROUNDS=$2; shift 2
source scripts/bench-lib.sh
port=$(free_udp_port)
start_master "$port"
names=(); subs=(); bases=()
i=1
for nb in "$@"; do
  name=${nb%%=*}; bin=${nb#*=}
  [ -x "$bin" ] || { echo "$0: $bin is not an executable" >&2; exit 2; }
  base=1.3.6.1.4.1.32473.$i
  "$bin" run --agentx "unix:$tmp/master" --listen none --run-dir "$tmp/run$i" --state-dir "$tmp/state$i" \
    --base-oid "$base" --log-level warn ${SUBAGENT_ARGS:-} 2>"$tmp/sub$i.log" &
  pids+=($!); subs+=($!); names+=("$name"); bases+=("$base"); i=$((i + 1))
done
addr=127.0.0.1:$port
for b in "${bases[@]}"; do
  for _ in $(seq 100); do [ "$(walk "$addr" "$b")" -gt 0 ] && break; sleep 0.1; done
  [ "$(walk "$addr" "$b")" -gt 0 ] || { echo "$0: nothing served under $b within 10 s; logs:" >&2; cat "$tmp"/*.log >&2; exit 1; }
done
header
for _ in $(seq "$ROUNDS"); do
  for k in "${!names[@]}"; do measure "${names[$k]}" "$addr" "${bases[$k]}" "${subs[$k]}" "$master"; done
done
medians "${names[@]}"
