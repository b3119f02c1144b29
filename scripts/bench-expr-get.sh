#!/usr/bin/env bash
# SNMP GET latency while 1,000 derived statistics and 1,000 alarms are
# evaluated every second (issue 41, docs/PERFORMANCE.md "Derived statistics
# and alarms"): one standalone daemon built from the tree on the fixture
# host (hoststats/testdata) with 5,000 processes more (stormload -procs),
# its shipped settings but expressions.interval 1s, probed by
# `stormload -probe` (gosnmp, v2c, one GET every 50 ms of sysUpTime.0,
# CPU/total/user, Mem/Real/%free, Proc/nprocs and two procPidTable cells)
# for SECONDS in each arm, the arms in turn, ROUNDS times:
#   none         no expressions
#   host-only    1,000 derived and 1,000 alarms over the disks,
#                processors, interfaces and memory
#   procs-1pct   the same, one in 100 summing or comparing all 5,000
#                processes' usercpu instead
#   procs-10pct  one in 10
#   host-only-1h host-only's definitions evaluated at the reload and then
#                not for an hour: the tree of 2,000 expressions without
#                their evaluation
# (the mixes of derive's BenchmarkEvaluate1000Derived1000Alarms on the
# daemon's paths). The arms switch by rewriting the configuration and
# SIGHUP, so they share one daemon, its /proc and its processes' reading;
# the probe starts once the new definitions have been evaluated twice.
# Prints each arm's p50, p99 and max per round, the medians over the
# rounds, the evaluations (Agent/expr/evals) and the last evaluation's
# duration (evalms).
# Usage: scripts/bench-expr-get.sh [ROUNDS [SECONDS]]   (default 3 rounds
# of 30 s: about 10 minutes)
#   SUBAGENT=path  another daemon binary (a before/after run)
#   MIXES="..."    the arms (default: all five, in this order)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
SECS=${2:-30}
MIXES=${MIXES:-none host-only host-only-1h procs-1pct procs-10pct}
BASE=1.3.6.1.4.1.32473.1
source scripts/bench-lib.sh
if [ -z "${SUBAGENT:-}" ]; then
  go build -o bin/subagent ./cmd/subagent
  SUBAGENT=./bin/subagent
fi
go build -o bin/stormload ./samples/stormload

cp -r hoststats/testdata/proc "$tmp/proc"
./bin/stormload -procs 5000 -proc-root "$tmp/proc"

# mix NAME: the expressions' configuration of that arm.
mix() {
  local every iv=1s
  case $1 in
  none) echo "expressions: {interval: 1s}"; return ;;
  host-only) every=0 ;;
  host-only-1h) every=0 iv=1h ;;
  procs-1pct) every=100 ;;
  procs-10pct) every=10 ;;
  *) echo "$0: unknown mix $1" >&2; exit 1 ;;
  esac
  awk -v every="$every" -v iv="$iv" 'BEGIN {
    nd = split("sum(Disk/*/busy)|Disk/*/rblk + Disk/*/wblk|avg(CPU/*/idle)|LAN/*/ibyte + LAN/*/obyte|Mem/Real/free / Mem/Real/size * 100", d, "|")
    na = split("Disk/*/busy > 90|avg(CPU/*/idle) < 10|Mem/Real/free / Mem/Real/size < 0.1|LAN/*/ibyte > 1e8", a, "|")
    print "expressions: {interval: " iv "}"
    print "derived:"
    for (i = 0; i < 1000; i++) {
      x = d[i % nd + 1]; if (every > 0 && i % every == 0) x = "sum(Proc/pid/*/usercpu)"
      printf "  - {name: d%d, expr: \"%s\"}\n", i, x
    }
    print "alarms:"
    for (i = 0; i < 1000; i++) {
      x = a[i % na + 1]; if (every > 0 && i % every == 0) x = "Proc/pid/*/usercpu > 5000"
      printf "  - {name: a%d, expr: \"%s\", for: 3, keep: 2}\n", i, x
    }
  }'
}

sport=$(free_udp_port)
mix none >"$tmp/config.yaml"
"$SUBAGENT" run --config "$tmp/config.yaml" --listen "127.0.0.1:$sport" --agentx none --run-dir "$tmp/run" \
  --state-dir "$tmp/state" --base-oid "$BASE" --proc-root "$tmp/proc" --sys-root "$PWD/hoststats/testdata/sys" \
  --log-level warn 2>"$tmp/subagent.log" &
pids+=($!); sub=$!
wait_served "127.0.0.1:$sport" 1.3.6.1.2.1.1.3.0
val() { "$SUBAGENT" get --run-dir "$tmp/run" --state-dir "$tmp/state" "$1" 2>/dev/null | awk '{print $2}'; }
getoids="1.3.6.1.2.1.1.3.0,$BASE.1.0.1.0,$BASE.2.1.3.0,$BASE.10.5.0,$BASE.200.2.10.100.1.13.10000,$BASE.200.2.10.100.1.15.12500"

echo "bench-expr-get: commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), daemon $SUBAGENT, $(nproc) processors," \
  "$(val Proc/nprocs) processes, $ROUNDS rounds of $SECS s per arm, $(date -u +%FT%TZ)"
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-6s %-12s %6s %9s %9s %9s %7s %10s %9s\n' round arm gets p50-ms p99-ms max-ms errors evals evalms
: >"$tmp/results"
for r in $(seq "$ROUNDS"); do
  for m in $MIXES; do
    mix "$m" >"$tmp/config.yaml"
    kill -HUP "$sub"
    # Reloaded: Agent/expr has this arm's count of instances; then two
    # evaluations of them (the first reads the counters for the rates).
    want=$(grep -c 'name: [ad][0-9]' "$tmp/config.yaml" || true)
    for _ in $(seq 100); do
      n=$("$SUBAGENT" peek --run-dir "$tmp/run" --state-dir "$tmp/state" Agent/expr/ 2>/dev/null | grep -c '^Agent/expr/[ad][0-9]*/ ' || true)
      [ "$n" = "$want" ] && break
      sleep 0.2
    done
    [ "$n" = "$want" ] || { echo "$0: arm $m: $n expressions served, want $want" >&2; exit 1; }
    e0=$(val Agent/expr/evals)
    case $m in
    *-1h) sleep 2 ;;
    *) for _ in $(seq 100); do [ "$(val Agent/expr/evals)" -ge $((e0 + 2)) ] && break; sleep 0.2; done ;;
    esac
    e0=$(val Agent/expr/evals)
    out=$(./bin/stormload -probe "127.0.0.1:$sport" -oids "$getoids" -duration "${SECS}s")
    e1=$(val Agent/expr/evals)
    # "probe: N gets, p50 X ms, p99 Y ms, max Z ms, E errors"
    line=$(echo "$out" | awk -v r="$r" -v m="$m" -v ev="$((e1 - e0))" -v ms="$(val Agent/expr/evalms)" \
      '{printf "%-6s %-12s %6d %9.2f %9.2f %9.2f %7d %10d %9s\n", r, m, $2, $5, $8, $11, $13, ev, ms}')
    echo "$line" | tee -a "$tmp/results"
  done
done
echo "load average at the end:   $(cut -d' ' -f1-3 /proc/loadavg)"
echo "median of $ROUNDS rounds:"
for m in $MIXES; do
  awk -v m="$m" '$2 == m' "$tmp/results" >"$tmp/arm"
  med() { awk -v c="$1" '{print $c}' "$tmp/arm" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
  printf '%-6s %-12s %6s %9s %9s %9s %7s %10s %9s\n' median "$m" "$(med 3)" "$(med 4)" "$(med 5)" "$(med 6)" "$(med 7)" "$(med 8)" "$(med 9)"
done
grep "level=ERROR" "$tmp/subagent.log" | head -5 || true
