#!/usr/bin/env bash
# End-to-end walk benchmark: a real snmpd master on loopback, and two AgentX
# subagents attached to it over one Unix socket:
#   - ours (bin/subagent) serving the whole base subtree;
#   - net-snmp's own C subagent (snmpd -X) serving hrSWRunTable, which the
#     master is told not to serve itself (-I -hrSWRunTable).
# Like is compared with like: our Proc/pid table (8 statistics per process)
# and hrSWRunTable (7 columns per process) have one row per process of the
# same host; our whole tree is walked as well. Each subtree is bulk-walked
# WALKS times through the master. Reported per subtree: varbinds per second
# (wall clock, including one snmpbulkwalk start per walk for both sides),
# and CPU seconds per 10,000 varbinds of the subagent and of the master
# (utime+stime from /proc). The subagent's CPU includes its snapshot
# rebuilds (refresh.min_age, 1 s by default).
# Usage: scripts/bench-walk.sh [WALKS [ROUNDS]]   (defaults 20 and 3; every
# wait is bounded). The two subagents are measured alternately, ROUNDS
# times; the last lines are the medians.
set -euo pipefail
cd "$(dirname "$0")/.."
WALKS=${1:-20}
ROUNDS=${2:-3}
BASE=${BASE:-1.3.6.1.4.1.32473.1}
HRSWRUN=1.3.6.1.2.1.25.4.2
PROCPID=$BASE.10.100
for t in snmpd snmpbulkwalk; do
  command -v "$t" >/dev/null || { echo "bench-walk: $t missing; run 'make test-deps' (Debian packages snmpd, snmp)" >&2; exit 1; }
done
[ -x bin/subagent ] || go build -o bin/subagent ./cmd/subagent

tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  sleep 0.2
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT

port=$(python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$tmp/master.conf" <<CONF
master agentx
agentXSocket unix:$tmp/master
agentXPerms 0700 0700
agentaddress udp:127.0.0.1:$port
rocommunity public 127.0.0.1
persistentDir $tmp/persist-master
CONF
cat >"$tmp/sub.conf" <<CONF
agentXSocket unix:$tmp/master
persistentDir $tmp/persist-sub
CONF

SNMP_PERSISTENT_DIR=$tmp/persist-master snmpd -f -Lf "$tmp/master.log" -C -c "$tmp/master.conf" -I -hrSWRunTable -p "$tmp/master.pid" &
pids+=($!); master=$!
for _ in $(seq 100); do [ -S "$tmp/master" ] && break; sleep 0.1; done
[ -S "$tmp/master" ] || { echo "bench-walk: master did not open its AgentX socket" >&2; cat "$tmp/master.log" >&2; exit 1; }

SNMP_PERSISTENT_DIR=$tmp/persist-sub snmpd -f -Lf "$tmp/sub.log" -X -C -c "$tmp/sub.conf" -I hrSWRunTable,swrun -p "$tmp/sub.pid" &
pids+=($!); csub=$!
./bin/subagent run --agentx "unix:$tmp/master" --listen none --run-dir "$tmp/run" --state-dir "$tmp/state" \
  --base-oid "$BASE" --log-level warn ${SUBAGENT_ARGS:-} 2>"$tmp/subagent.log" &
pids+=($!); ours=$!

walk() { snmpbulkwalk -v2c -c public -Cr50 -t 5 -r 0 -On "127.0.0.1:$port" "$1" 2>/dev/null | grep -c "^\.$1\." || true; }
for _ in $(seq 100); do
  [ "$(walk "$BASE")" -gt 0 ] && [ "$(walk "$HRSWRUN")" -gt 0 ] && break
  sleep 0.1
done
for oid in "$BASE" "$HRSWRUN"; do
  [ "$(walk "$oid")" -gt 0 ] || { echo "bench-walk: nothing served under $oid within 10 s; logs:" >&2; cat "$tmp"/*.log >&2; exit 1; }
done

# utime+stime in clock ticks; fields counted after the ")" that ends the
# command name, which may itself contain spaces.
cpu() { sed 's/.*) //' "/proc/$1/stat" | awk '{print $12+$13}'; }
hz=$(getconf CLK_TCK)

measure() { # name oid subagent-pid
  local n0 t0 t1 s0 s1 m0 m1 total=0
  s0=$(cpu "$3"); m0=$(cpu "$master"); t0=$(date +%s.%N)
  for _ in $(seq "$WALKS"); do total=$((total + $(walk "$2"))); done
  t1=$(date +%s.%N); s1=$(cpu "$3"); m1=$(cpu "$master")
  awk -v name="$1" -v n="$total" -v w="$WALKS" -v dt="$(echo "$t1 - $t0" | bc)" \
      -v sc="$((s1 - s0))" -v mc="$((m1 - m0))" -v hz="$hz" 'BEGIN {
    printf "%-28s %8d %6d %12.0f %14.3f %14.3f\n", name, n/w, w, n/dt, (sc/hz)/(n/10000), (mc/hz)/(n/10000) }' | tee -a "$tmp/results"
}
printf "%-28s %8s %6s %12s %14s %14s\n" "subagent" "vb/walk" "walks" "varbinds/s" "sub-cpu-s/10k" "master-cpu-s/10k"
for r in $(seq "$ROUNDS"); do
  measure "ours-Go-whole-tree" "$BASE" "$ours"
  measure "ours-Go-Proc/pid" "$PROCPID" "$ours"
  measure "netsnmp-C-hrSWRunTable" "$HRSWRUN" "$csub"
done
echo "median of $ROUNDS rounds:"
for who in ours-Go-whole-tree ours-Go-Proc/pid netsnmp-C-hrSWRunTable; do
  for col in 2 4 5 6; do
    grep "^$who " "$tmp/results" | awk -v c="$col" '{print $c}' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
  done | paste -sd' ' | awk -v who="$who" '{printf "%-28s %8d %6s %12.0f %14.3f %14.3f\n", who, $1, "-", $2, $3, $4}'
done
