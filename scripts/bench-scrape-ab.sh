#!/usr/bin/env bash
# Compares two builds' CPU per snmp_exporter scrape (docs/FLEET.md, Cost)
# under the same load: both daemons run at once on the fixture host
# (hoststats/testdata), standalone on loopback with their shipped
# settings, and one real snmp_exporter walks them with the shipped module
# in turn: per round, K scrapes of A (GAP s apart, more than
# refresh.min_age) while B idles, then K of B while A idles. A build's
# CPU per scrape is its run time (every thread's
# /proc/PID/task/*/schedstat) over its own block minus over the other's
# block (its idle cost, Proc kept fresh included), over K; the exporter's
# CPU per scrape of each is beside it. Medians over the rounds last.
# A build may bring its own module (NAME=BINARY:GENERATOR.yml, e.g. the
# before commit's MIBs/snmp_exporter/generator.yml), so that a change of
# the module's shape is measured with the daemon it ships with.
# Usage: scripts/bench-scrape-ab.sh ROUNDS K GAP A=BINARY[:GEN] B=BINARY[:GEN]
#   e.g. git worktree add /tmp/before <rev> && (cd /tmp/before && go build -o /tmp/before.bin ./cmd/subagent)
#        go build -o bin/subagent ./cmd/subagent
#        scripts/bench-scrape-ab.sh 7 8 2 before=/tmp/before.bin after=bin/subagent
#        scripts/bench-scrape-ab.sh 7 8 2 before=/tmp/before.bin:/tmp/before/MIBs/snmp_exporter/generator.yml after=bin/subagent
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 5 ] || { echo "usage: $0 ROUNDS K GAP A=BINARY B=BINARY" >&2; exit 2; }
ROUNDS=$1; K=$2; GAP=$3; shift 3
source scripts/bench-lib.sh
sh scripts/install-exporter.sh bin/tools >/dev/null
names=(); subs=(); ports=(); bins=(); configs=()
for nb in "$@"; do
  name=${nb%%=*}; bin=${nb#*=}; gen=MIBs/snmp_exporter/generator.yml
  case $bin in *:*) gen=${bin#*:}; bin=${bin%%:*} ;; esac
  [ -x "$bin" ] || { echo "$0: $bin is not an executable" >&2; exit 2; }
  [ -f "$gen" ] || { echo "$0: $gen is no file" >&2; exit 2; }
  # The build's module, named after it (module=NAME in its scrapes).
  sed -e "s/^  subagent:\$/  $name:/" -e '/^auths:/,/^modules:/{/^modules:/!d}' "$gen" >"$tmp/gen-$name.yml"
  bin/tools/generator generate -m MIBs -g "$tmp/gen-$name.yml" -o "$tmp/snmp-$name.yml" 2>>"$tmp/generator.log"
  configs+=(--config.file="$tmp/snmp-$name.yml"); bins+=("$nb")
  port=$(free_udp_port); d=$tmp/d${#subs[@]}; mkdir -p "$d"
  "$bin" run --run-dir "$d/run" --state-dir "$d/state" --log-level warn --agentx none --listen "127.0.0.1:$port" \
    --proc-root "$PWD/hoststats/testdata/proc" --sys-root "$PWD/hoststats/testdata/sys" 2>"$d/subagent.log" &
  pids+=($!); subs+=($!); names+=("$name"); ports+=("$port")
done
for p in "${ports[@]}"; do wait_served "127.0.0.1:$p" 1.3.6.1.4.1.32473.1.1.0.1.0; done
wport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
bin/tools/generator generate -m MIBs -g MIBs/snmp_exporter/generator.yml -o "$tmp/snmp.yml" 2>>"$tmp/generator.log"
bin/tools/snmp_exporter --config.file="$tmp/snmp.yml" "${configs[@]}" --web.listen-address="127.0.0.1:$wport" >"$tmp/exporter.log" 2>&1 &
pids+=($!); exp=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$wport/metrics" >/dev/null && break; sleep 0.1; done
runns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%.0f\n", s}'; }
url() { echo "http://127.0.0.1:$wport/snmp?target=127.0.0.1:${ports[$1]}&module=${names[$1]}&auth=public_v2"; }
for i in 0 1; do curl -sf -o /dev/null "$(url "$i")"; done
sleep "$GAP"
echo "bench-scrape-ab: commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), ${names[0]}=${bins[0]#*=} ${names[1]}=${bins[1]#*=}, $(nproc) processors, $ROUNDS rounds of $K scrapes of each $GAP s apart, $(date -u +%FT%TZ)"
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
# Per round and block: the block's build, both daemons' and the
# exporter's run time (ns); the samples and the SNMP exchanges of the
# block's last scrape (its snmp_scrape_* series left out).
: >"$tmp/blocks"
for r in $(seq "$ROUNDS"); do
  for i in 0 1; do
    a0=$(runns "${subs[0]}"); b0=$(runns "${subs[1]}"); e0=$(runns "$exp")
    for _ in $(seq "$K"); do curl -sf -o "$tmp/body" "$(url "$i")"; sleep "$GAP"; done
    echo "$r $i $(($(runns "${subs[0]}") - a0)) $(($(runns "${subs[1]}") - b0)) $(($(runns "$exp") - e0)) $(grep -v '^#' "$tmp/body" | grep -vc '^snmp_scrape_') $(awk '/^snmp_scrape_packets_sent/ {print $2}' "$tmp/body")" >>"$tmp/blocks"
  done
done
echo "load average at the end:   $(cut -d' ' -f1-3 /proc/loadavg)"
for i in 0 1; do echo "${names[$i]} RSS at the end: $(awk '/VmRSS/ {print $2, $3}' "/proc/${subs[$i]}/status")"; done
# Per round: each build's CPU per scrape (ms), the exporter's per scrape of each.
awk -v k="$K" '{cpu[$1, $2, 0] = $3; cpu[$1, $2, 1] = $4; ex[$1, $2] = $5; rounds[$1] = 1; samples[$2] = $6; packets[$2] = $7}
  END {for (r in rounds) printf "%d %.3f %.3f %.3f %.3f\n", r, (cpu[r, 0, 0] - cpu[r, 1, 0]) / k / 1e6,
    (cpu[r, 1, 1] - cpu[r, 0, 1]) / k / 1e6, ex[r, 0] / k / 1e6, ex[r, 1] / k / 1e6
    printf "%d samples and %d exchanges a scrape of '"${names[0]}"', %d and %d of '"${names[1]}"'\n", samples[0], packets[0], samples[1], packets[1] > "'"$tmp/samples"'"}' "$tmp/blocks" | sort -n >"$tmp/per"
printf "%5s %12s %12s %14s %14s\n" round "${names[0]}" "${names[1]}" "exporter(${names[0]})" "exporter(${names[1]})"
awk '{printf "%5d %10.2fms %10.2fms %12.2fms %12.2fms\n", $1, $2, $3, $4, $5}' "$tmp/per"
med() { awk -v c="$1" '{print $c}' "$tmp/per" | sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
printf "%5s %10.2fms %10.2fms %12.2fms %12.2fms\n" median "$(med 2)" "$(med 3)" "$(med 4)" "$(med 5)"
cat "$tmp/samples"
awk -v a="$(med 2)" -v b="$(med 3)" -v na="${names[0]}" -v nb="${names[1]}" 'BEGIN {printf "%s / %s: %.2f\n", nb, na, b / a}'
