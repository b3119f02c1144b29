#!/usr/bin/env bash
# The daemon's CPU per snmp_exporter scrape (docs/FLEET.md, Cost): one
# standalone daemon on its shipped settings on this host's /proc, walked
# by the real snmp_exporter with the shipped module (`subagent`:
# measurements only) and, beside it, the module with the records tables
# the shipped one leaves out (mib.ExporterRecords: the Directory catalogue
# and the notification log, as before they were left out), in rounds of
# blocks of scrapes of each and of idle intervals (below), so that both
# see the same load. Scrapes are GAP seconds apart (more than
# refresh.min_age: each scrape's values are read fresh, as at a 15 s
# interval). CPU is the daemon's run time, every thread's
# /proc/PID/task/*/schedstat in ns (not clock ticks).
# Usage: scripts/bench-scrape.sh [ROUNDS [K [GAP]]]   (default 7 rounds
# of 5 scrapes of each module and 5 idle intervals, 2 s apart: about 3.5
# minutes)
#   SUBAGENT=path   another daemon binary to measure (a before/after run)
#   CPUPROFILE=file the daemon's CPU profile over the scrapes (go tool pprof)
#   FIXTURE=1       the daemon reads the test fixture host
#                   (hoststats/testdata: 4 processors, 4 disks, 6 processes)
#                   instead of this host's /proc and /sys
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-7}
K=${2:-5}
GAP=${3:-2}
source scripts/bench-lib.sh
if [ -z "${SUBAGENT:-}" ]; then
  go build -o bin/subagent ./cmd/subagent
  SUBAGENT=./bin/subagent
fi
sh scripts/install-exporter.sh bin/tools >/dev/null
echo "bench-scrape: commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), daemon $SUBAGENT, $(nproc) processors, $ROUNDS rounds of $K scrapes of each module $GAP s apart, $(date -u +%FT%TZ)"
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"

# The shipped module, and the same with the records tables' walks (the
# tables are in the MIB; only the walk left them out).
gen=MIBs/snmp_exporter/generator.yml
bin/tools/generator generate -m MIBs -g "$gen" -o "$tmp/measurements.yml" 2>"$tmp/generator.log"
sed -e 's/^  subagent:$/  subagent_records:/' \
  -e 's/^    walk:$/    walk:\n      - directoryStatTable\n      - directoryContextTable\n      - directoryChangeTable\n      - notifLogEntryTable\n      - notifLogEntryVarTable/' \
  -e '/^auths:/,/^modules:/{/^modules:/!d}' "$gen" >"$tmp/records-gen.yml"
bin/tools/generator generate -m MIBs -g "$tmp/records-gen.yml" -o "$tmp/records.yml" 2>>"$tmp/generator.log"

sport=$(free_udp_port)
mkdir -p "$tmp/d"
opts=()
[ -z "${CPUPROFILE:-}" ] || opts+=(--cpuprofile "$CPUPROFILE")
[ -z "${FIXTURE:-}" ] || opts+=(--proc-root "$PWD/hoststats/testdata/proc" --sys-root "$PWD/hoststats/testdata/sys")
if [ -n "${FIXTURE:-}" ]; then echo "host read: the fixture host (hoststats/testdata)"; else echo "host read: this host ($(ls /proc | grep -c '^[0-9]') processes)"; fi
"$SUBAGENT" run --run-dir "$tmp/d/run" --state-dir "$tmp/d/state" --log-level warn --agentx none --listen "127.0.0.1:$sport" "${opts[@]}" 2>"$tmp/d/subagent.log" &
pids+=($!); sub=$!
wait_served "127.0.0.1:$sport" 1.3.6.1.4.1.32473.1.1.0.1.0

wport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
bin/tools/snmp_exporter --config.file="$tmp/measurements.yml" --config.file="$tmp/records.yml" --web.listen-address="127.0.0.1:$wport" >"$tmp/exporter.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$wport/metrics" >/dev/null && break; sleep 0.1; done

# runns PID: nanoseconds the process's threads have run.
runns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%.0f\n", s}'; }

# The daemon's CPU before any scrape (its first refresh done): its
# periodic refresh alone. Scraped, it also keeps the contexts read apart
# (Proc) fresh in the background for refresh.warm_for: the idle blocks
# below.
sleep 2
c0=$(runns "$sub"); t0=$(date +%s%N); sleep 10; c1=$(runns "$sub"); t1=$(date +%s%N)
cold=$(awk -v c="$((c1 - c0))" -v t="$((t1 - t0))" 'BEGIN {printf "%.2f", c / t * 1000}')

# One scrape of each first (connections, the exporter's first walk).
for m in subagent subagent_records; do curl -sf -o /dev/null "http://127.0.0.1:$wport/snmp?target=127.0.0.1:$sport&module=$m&auth=public_v2"; done
sleep "$GAP"
# Rounds of three blocks, in turn: K scrapes of the shipped module, K of
# the module with records, and K intervals without a scrape (the daemon's
# idle cost: its periodic refresh, timers). A block's CPU is every thread's
# run time over the block, so work a scrape starts and finishes after its
# answer (a context read apart, garbage collection) counts; a scrape's
# CPU is its block's minus the idle block's of the round, over K.
: >"$tmp/blocks"
for r in $(seq "$ROUNDS"); do
  for m in subagent subagent_records idle; do
    c0=$(runns "$sub"); t0=$(date +%s%N)
    for _ in $(seq "$K"); do
      if [ "$m" != idle ]; then
        s0=$(date +%s%N)
        curl -sf -o "$tmp/body" "http://127.0.0.1:$wport/snmp?target=127.0.0.1:$sport&module=$m&auth=public_v2"
        s1=$(date +%s%N)
        echo "$m $(((s1 - s0) / 1000)) $(grep -vc '^#' "$tmp/body") $(wc -c <"$tmp/body")" >>"$tmp/scrapes"
      fi
      sleep "$GAP"
    done
    c1=$(runns "$sub"); t1=$(date +%s%N)
    echo "$r $m $(((c1 - c0) / 1000)) $(((t1 - t0) / 1000))" >>"$tmp/blocks"
  done
done
echo "load average at the end:   $(cut -d' ' -f1-3 /proc/loadavg)"

# Per round and module: (block CPU - idle block CPU scaled to the block's
# length) / K, in ms.
awk -v k="$K" '{cpu[$1" "$2] = $3; dur[$1" "$2] = $4; rounds[$1] = 1}
  END {for (r in rounds) for (m in cpu) if (index(m, r" ") == 1 && m != r" idle") {
    split(m, f, " "); idle = cpu[r" idle"] * dur[m] / dur[r" idle"]
    printf "%s %.3f %.3f\n", f[2], (cpu[m] - idle) / k / 1000, idle / k / 1000 }}' "$tmp/blocks" >"$tmp/per"
col() { grep "^$1 " "$2" | awk -v c="$3" '{print $c}' | sort -g; }
q() { awk -v p="$1" '{a[NR]=$1} END {i = int(p * (NR - 1) + 0.5) + 1; print a[i]}'; }
printf "%-17s %8s %8s %10s %9s %9s %9s %10s\n" module samples bytes scrape-med cpu-min cpu-med cpu-max idle/scrape
for m in subagent subagent_records; do
  printf "%-17s %8d %8d %8.1fms %7.2fms %7.2fms %7.2fms %8.2fms\n" "$m" "$(col "$m" "$tmp/scrapes" 3 | q 0.5)" "$(col "$m" "$tmp/scrapes" 4 | q 0.5)" \
    "$(col "$m" "$tmp/scrapes" 2 | q 0.5 | awk '{print $1 / 1000}')" \
    "$(col "$m" "$tmp/per" 2 | q 0)" "$(col "$m" "$tmp/per" 2 | q 0.5)" "$(col "$m" "$tmp/per" 2 | q 1)" "$(col "$m" "$tmp/per" 3 | q 0.5)"
done
awk -v c="$cold" -v w="$(col subagent "$tmp/per" 3 | q 0.5)" -v g="$GAP" 'BEGIN {
  printf "daemon idle: %.2f ms/s never scraped, %.2f ms/s once scraped (contexts read apart kept fresh)\n", c, w / g }'
echo "(cpu: the daemon's CPU per scrape, every thread, idle cost subtracted; min, median and max over $ROUNDS rounds of $K scrapes; idle/scrape: the idle cost subtracted)"
if [ -n "${CPUPROFILE:-}" ]; then
  kill -INT "$sub"; wait "$sub" 2>/dev/null || true
  echo "profile: $CPUPROFILE (go tool pprof -top $SUBAGENT $CPUPROFILE)"
fi
