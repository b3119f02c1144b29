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
[ -x bin/subagent ] || go build -o bin/subagent ./cmd/subagent

source scripts/bench-lib.sh
port=$(free_udp_port)
start_master "$port" -I -hrSWRunTable
cat >"$tmp/sub.conf" <<CONF
agentXSocket unix:$tmp/master
persistentDir $tmp/persist-sub
CONF

SNMP_PERSISTENT_DIR=$tmp/persist-sub snmpd -f -Lf "$tmp/sub.log" -X -C -c "$tmp/sub.conf" -I hrSWRunTable,swrun -p "$tmp/sub.pid" &
pids+=($!); csub=$!
./bin/subagent run --agentx "unix:$tmp/master" --listen none --run-dir "$tmp/run" --state-dir "$tmp/state" \
  --base-oid "$BASE" --log-level warn ${SUBAGENT_ARGS:-} 2>"$tmp/subagent.log" &
pids+=($!); ours=$!

addr=127.0.0.1:$port
for _ in $(seq 100); do
  [ "$(walk "$addr" "$BASE")" -gt 0 ] && [ "$(walk "$addr" "$HRSWRUN")" -gt 0 ] && break
  sleep 0.1
done
for oid in "$BASE" "$HRSWRUN"; do
  [ "$(walk "$addr" "$oid")" -gt 0 ] || { echo "bench-walk: nothing served under $oid within 10 s; logs:" >&2; cat "$tmp"/*.log >&2; exit 1; }
done

header
for r in $(seq "$ROUNDS"); do
  measure "ours-Go-whole-tree" "$addr" "$BASE" "$ours" "$master"
  measure "ours-Go-Proc/pid" "$addr" "$PROCPID" "$ours" "$master"
  measure "netsnmp-C-hrSWRunTable" "$addr" "$HRSWRUN" "$csub" "$master"
done
medians ours-Go-whole-tree ours-Go-Proc/pid netsnmp-C-hrSWRunTable
