#!/usr/bin/env bash
# The issue's alarm storm with the real daemon: a hotset over
# DDS/Storm/*/load (hotset.interval 1s, one notification per peer set per
# 5 min, each to a real snmptrapd on loopback) while samples/stormload
# keeps HOT standing peer sets above the threshold and registers NEW new
# peer names a second (each a new peer set, raising at once) for
# DURATION seconds, with the notification log full at its 10,000
# entries (seeded before the start). Measured over the storm only (the
# difference of reads before and after it):
#   - the hotsets' evaluation delay, from when an evaluation was due to
#     its events handed on: every evaluation, in the buckets of
#     Agent/hotsets/delayle*, so p50 and p99 are the bucket bounds they
#     fall in; the maximum is Agent/hotsets/delaymaxms;
#   - bytes the daemon wrote to disk (write_bytes of /proc/PID/io, its
#     own log file included) per notification logged (NotifLog/logged);
#   - the daemon's largest VmRSS, sampled every second;
#   - SNMP GET latency at the standalone responder (stormload -probe:
#     sysUpTime.0 and a tree value, one GET every 50 ms) during the storm
#     beside IDLE seconds before it, the log already full;
#   - notifications snmptrapd received against the hotset's limit
#     (burst + storm seconds / interval, + 1 for the one in progress),
#     events = received + held back, Hotset/storm/notifyheld =
#     Agent/traps/suppressed, and the hotsetSuppressed they carried.
# Usage: scripts/bench-storm.sh [DURATION [NEW [HOT]]] (defaults 120, 20,
# 100). NOTIFY_BURST and NOTIFY_INTERVAL set hotset.notify_burst and
# notify_interval (unset: shipped, 10 and 10s); IDLE (default 20) the
# seconds of the idle GETs; SUBAGENT another daemon binary; KEEP a
# directory to copy the run's files (logs, state) to.
set -euo pipefail
cd "$(dirname "$0")/.."
DUR=${1:-120}
NEW=${2:-20}
HOT=${3:-100}
IDLE=${IDLE:-20}
BASE=1.3.6.1.4.1.32473.1
SUBAGENT=${SUBAGENT:-}
if [ -z "$SUBAGENT" ]; then
  go build -o bin/subagent ./cmd/subagent
  SUBAGENT=bin/subagent
fi
go build -o bin/stormload ./samples/stormload
command -v snmptrapd >/dev/null || { echo "$0: snmptrapd missing; run 'make test-deps'" >&2; exit 1; }

source scripts/bench-lib.sh
tport=$(free_udp_port)
sport=$(free_udp_port)
burst=${NOTIFY_BURST:-10}
ival=${NOTIFY_INTERVAL:-10s}
{
  echo "hotset:"
  echo "  interval: 1s"
  echo "  log_entries: 10000"
  [ -z "${NOTIFY_BURST:-}" ] || echo "  notify_burst: $NOTIFY_BURST"
  [ -z "${NOTIFY_INTERVAL:-}" ] || echo "  notify_interval: $NOTIFY_INTERVAL"
  echo "hotsets:"
  echo "  - {name: storm, stat: DDS/Storm/*/load, maxresp: 1, threshold: 50, frequency: 5m, feed_type: threshold,"
  echo "     excp_type: both, severity: 1, trap_no: 5}"
  echo "traps:"
  echo "  - {address: 127.0.0.1:$tport, version: v2c, community: public}"
} >"$tmp/storm.yaml"

# snmptrapd: one line per notification, its VarBinds numeric.
mkdir -p "$tmp/trapd"
printf 'disableAuthorization yes\nformat2 TRAP %%v\\n\n' >"$tmp/trapd/snmptrapd.conf"
snmptrapd -f -C -c "$tmp/trapd/snmptrapd.conf" -M /dev/null -m "" -Lf "$tmp/trapd/trapd.log" -n -On -X -p "$tmp/trapd/pid" "udp:127.0.0.1:$tport" \
  >"$tmp/trapd/out" 2>&1 &
pids+=($!)
for _ in $(seq 100); do grep -q "NET-SNMP version" "$tmp/trapd/trapd.log" 2>/dev/null && break; sleep 0.1; done

mkdir -p "$tmp/state"
./bin/stormload -seed 10000 -journal "$tmp/state/notifications.journal" -base "$BASE" >/dev/null
"$SUBAGENT" run --config "$tmp/storm.yaml" --listen "127.0.0.1:$sport" --agentx none --run-dir "$tmp/run" \
  --state-dir "$tmp/state" --base-oid "$BASE" --log-level warn 2>"$tmp/subagent.log" &
pids+=($!); sub=$!
wait_served "127.0.0.1:$sport" 1.3.6.1.2.1.1.3.0
sa() { "$SUBAGENT" get --run-dir "$tmp/run" --state-dir "$tmp/state" "$@" 2>/dev/null; }
val() { sa "$1" | awk '{print $2}'; }
rss() { awk '/VmRSS/{print $2}' "/proc/$sub/status"; }
wbytes() { awk '/^write_bytes/{print $2}' "/proc/$sub/io"; }
buckets=(delayle1 delayle5 delayle10 delayle20 delayle50 delayle100 delayle500 delayle1000 delaygt1000)
counters() { # NAME: the storm's counters now, one per line in $tmp/NAME
  {
    echo "wbytes $(wbytes)"
    for p in NotifLog/logged NotifLog/entries Hotset/storm/events Hotset/storm/notifyheld Agent/traps/suppressed Agent/traps/sent; do
      echo "$p $(val "$p")"
    done
    for b in "${buckets[@]}"; do echo "$b $(val "Agent/hotsets/$b")"; done
    echo "traps $(grep -c "14.0.1.0 = STRING: \"\?storm" "$tmp/trapd/trapd.log" || true)"
  } >"$tmp/$1"
}
diffc() { echo $(( $(awk -v k="$1" '$1==k{print $2}' "$tmp/after") - $(awk -v k="$1" '$1==k{print $2}' "$tmp/before") )); }
getoids="1.3.6.1.2.1.1.3.0,$BASE.12.1.0"
sleep 2
./bin/stormload -probe "127.0.0.1:$sport" -oids "$getoids" -duration "${IDLE}s" >"$tmp/idle.txt"
rss_idle=$(rss)
counters before

t0=$(date +%s.%N)
SUBAGENT_RUN_DIR=$tmp/run ./bin/stormload -hot "$HOT" -new "$NEW" -duration "${DUR}s" -dir "$tmp" >"$tmp/stormload.txt" 2>&1 &
pids+=($!); load=$!
./bin/stormload -probe "127.0.0.1:$sport" -oids "$getoids" -duration "${DUR}s" >"$tmp/storm.txt" &
pids+=($!); prober=$!
rss_max=0
while kill -0 "$load" 2>/dev/null; do
  r=$(rss); [ "$r" -gt "$rss_max" ] && rss_max=$r
  sleep 1
done
t1=$(date +%s.%N)
wait "$prober"
sleep 3 # the last notifications reach snmptrapd
counters after
rss_end=$(rss)

elapsed=$(echo "$t1 - $t0" | bc)
logged=$(diffc NotifLog/logged)
wb=$(diffc wbytes)
events=$(diffc Hotset/storm/events)
held=$(diffc Hotset/storm/notifyheld)
supp=$(diffc Agent/traps/suppressed)
traps=$(diffc traps)
carried=$( (grep "14.0.1.0 = STRING: \"\?storm" "$tmp/trapd/trapd.log" || true) | grep -o "14\.0\.12\.0 = Gauge32: [0-9]*" | awk '{s += $4} END {print s + 0}' || true)
evals=0; counts=()
for b in "${buckets[@]}"; do c=$(diffc "$b"); counts+=("$c"); evals=$((evals + c)); done
bounds=(1 5 10 20 50 100 500 1000 inf)
pct() { # FRACTION: the bucket bound the evaluation at that rank falls in
  local want cum=0 i
  want=$(awk -v n="$evals" -v f="$1" 'BEGIN {r = int(n * f + 0.999999); print (r < 1 ? 1 : r)}')
  for i in "${!counts[@]}"; do cum=$((cum + counts[i])); [ "$cum" -ge "$want" ] && { echo "${bounds[i]}"; return; }; done
}
ival_s=$(awk -v v="$ival" 'BEGIN {n = v + 0; if (v ~ /ms$/) n /= 1000; else if (v ~ /m$/) n *= 60; print n}')
bound=$(awk -v b="$burst" -v e="$elapsed" -v i="$ival_s" 'BEGIN {print b + int(e / i) + 1}')
idle_p50=$(awk '{print $5}' "$tmp/idle.txt"); idle_p99=$(awk '{print $8}' "$tmp/idle.txt")
storm_p50=$(awk '{print $5}' "$tmp/storm.txt"); storm_p99=$(awk '{print $8}' "$tmp/storm.txt")
temps=$(find "$tmp/state" -name '*.tmp-*' | wc -l)

echo "alarm storm: ${DUR} s, $HOT standing peer sets, $NEW new peer names/s; log_entries 10000 seeded full;" \
  "notify_burst $burst, notify_interval $ival; daemon $SUBAGENT"
sed 1d "$tmp/stormload.txt"
printf '%-44s %-22s %s\n' "measure" "value" "target"
row() { printf '%-44s %-22s %s\n' "$1" "$2" "${3:-}"; }
row "evaluations in the storm" "$evals" "about $DUR"
row "evaluation delay by bucket (ms: count)" "$(for i in "${!counts[@]}"; do [ "${counts[i]}" -gt 0 ] && printf '<=%s:%s ' "${bounds[i]}" "${counts[i]}"; done)"
row "evaluation delay p50" "<= $(pct 0.5) ms"
row "evaluation delay p99" "<= $(pct 0.99) ms" "< 50 ms"
row "evaluation delay max (delaymaxms)" "$(val Agent/hotsets/delaymaxms) ms"
row "evaluation duration max (evalmaxms)" "$(val Agent/hotsets/evalmaxms) ms"
row "notifications logged (NotifLog/logged)" "$logged"
row "log entries kept (NotifLog/entries)" "$(val NotifLog/entries)" "10000"
row "disk bytes written (write_bytes)" "$wb"
row "bytes written per logged notification" "$(awk -v w="$wb" -v n="$logged" 'BEGIN {print (n > 0 ? int(w / n) : "-")}')" "< 4096"
row "journal file size" "$(stat -c %s "$tmp/state/notifications.journal")"
row "temporary files in the state directory" "$temps" "0"
row "VmRSS idle / max in storm / after (MB)" "$(awk -v a="$rss_idle" -v b="$rss_max" -v c="$rss_end" 'BEGIN {printf "%.1f / %.1f / %.1f", a/1024, b/1024, c/1024}')" "< 100 MB"
row "GET p50 idle / storm (ms)" "$idle_p50 / $storm_p50"
row "GET p99 idle / storm (ms)" "$idle_p99 / $storm_p99" "storm <= 2x idle"
row "GETs idle / storm (errors)" "$(awk '{print $2 " (" $13 ")"}' "$tmp/idle.txt") / $(awk '{print $2 " (" $13 ")"}' "$tmp/storm.txt")"
row "hotset events (Hotset/storm/events)" "$events"
row "notifications received by snmptrapd" "$traps" "<= $bound (burst + ${elapsed%.*} s / interval + 1)"
row "held back (Hotset/storm/notifyheld)" "$held" "events - received = $((events - traps))"
row "Agent/traps/suppressed" "$supp" "= notifyheld"
row "hotsetSuppressed carried by those received" "$carried" "<= held; the rest wait for the next"
grep -q "level=ERROR" "$tmp/subagent.log" && { echo "daemon errors:"; grep "level=ERROR" "$tmp/subagent.log" | head -5; }
[ -z "${KEEP:-}" ] || cp -r "$tmp" "$KEEP" # the logs, for a look
