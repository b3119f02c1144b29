#!/usr/bin/env bash
# End-to-end walk of Dynamic Data Suppliers: SUPPLIERS suppliers with STATS
# statistics each (samples/ddsload, one process, values changing every
# second) registered with bin/subagent, which is attached to a real snmpd
# master over AgentX and also runs its standalone responder. DDS/ (base.99)
# is bulk-walked WALKS times through the master and, beside it, WALKS times
# straight from the standalone responder: the difference is what the
# master's relaying costs. Columns as in scripts/bench-walk.sh.
# Statistics go 1,000 to a context (ddsload -per-context). The daemon's
# resident set is printed idle, once the tree is served, after the walks
# and a minute after the suppliers left.
# Usage: scripts/bench-dds-walk.sh [WALKS [ROUNDS [SUPPLIERS [STATS]]]]
# (defaults 3, 3, 100, 1000; every wait is bounded). More than the shipped
# dds.max_stats_all (250,000) in all raises it for the run:
#   scripts/bench-dds-walk.sh 1 1 16 62500    # the million-statistic walk
set -euo pipefail
cd "$(dirname "$0")/.."
WALKS=${1:-3}
ROUNDS=${2:-3}
SUPPLIERS=${3:-100}
STATS=${4:-1000}
BASE=${BASE:-1.3.6.1.4.1.32473.1}
DDS=$BASE.99
go build -o bin/subagent ./cmd/subagent
go build -o bin/ddsload ./samples/ddsload

source scripts/bench-lib.sh
port=$(free_udp_port)
sport=$(free_udp_port)
start_master "$port"
want=$((SUPPLIERS * STATS))
conf=()
if [ "$want" -gt 250000 ]; then
  printf 'dds:\n  max_stats_all: %d\n' "$want" >"$tmp/big.yaml"
  conf=(--config "$tmp/big.yaml")
fi
./bin/subagent run --agentx "unix:$tmp/master" --listen "127.0.0.1:$sport" --run-dir "$tmp/run" \
  --state-dir "$tmp/state" --base-oid "$BASE" --log-level warn "${conf[@]}" 2>"$tmp/subagent.log" &
pids+=($!); ours=$!
rss() { awk '/VmRSS/{printf "%.1f MB", $2/1024}' "/proc/$ours/status"; }
for _ in $(seq 100); do [ -S "$tmp/run/dds.sock" ] && break; sleep 0.1; done
sleep 2
rss_idle=$(rss)
SUBAGENT_RUN_DIR=$tmp/run ./bin/ddsload -suppliers "$SUPPLIERS" -stats "$STATS" -per-context 1000 -dir "$tmp" >"$tmp/ddsload.log" 2>&1 &
pids+=($!); load=$!
for _ in $(seq 300); do grep -q registered "$tmp/ddsload.log" && break; sleep 0.1; done
grep -q registered "$tmp/ddsload.log" || { echo "$0: ddsload did not register; logs:" >&2; cat "$tmp"/*.log >&2; exit 1; }

for _ in $(seq 240); do snmpgetnext -v2c -c public -On "127.0.0.1:$sport" "$DDS" | grep -q "\.99\.32473" && break; sleep 0.5; done
rss_served=$(rss)
for addr in "127.0.0.1:$port" "127.0.0.1:$sport"; do
  got=$(walk "$addr" "$DDS")
  [ "$got" -eq "$want" ] || { echo "$0: $addr served $got values under DDS/, want $want; logs:" >&2; cat "$tmp"/*.log >&2; exit 1; }
done

echo "$SUPPLIERS suppliers x $STATS statistics"
header
for r in $(seq "$ROUNDS"); do
  measure "dds-through-snmpd" "127.0.0.1:$port" "$DDS" "$ours" "$master"
  measure "dds-standalone" "127.0.0.1:$sport" "$DDS" "$ours" -
done
medians dds-through-snmpd dds-standalone
echo "the daemon's last refresh (the whole tree) and its DDS part:"
./bin/subagent get --run-dir "$tmp/run" --state-dir "$tmp/state" Agent/refreshms Agent/prov/DDS/collectms
echo "daemon RSS: idle $rss_idle; $want statistics served $rss_served; after the walks $(rss)"
kill "$load"; wait "$load" 2>/dev/null || true
for _ in $(seq 60); do sleep 1; snmpget -v2c -c public "127.0.0.1:$sport" "$BASE.99.1.0" >/dev/null 2>&1 || true; done
echo "daemon RSS a minute after the suppliers left: $(rss)"
