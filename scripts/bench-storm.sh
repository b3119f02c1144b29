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
# The same figures over IDLE seconds before the storm (the log already
# full, no supplier) stand beside them.
# Usage: scripts/bench-storm.sh [DURATION [NEW [HOT]]] (defaults 120, 20,
# 100). NOTIFY_BURST and NOTIFY_INTERVAL set hotset.notify_burst and
# notify_interval (unset: shipped, 10 and 10s); EXCP the hotset's
# excp_type (default both; none: evaluated, nothing raised or sent, the
# comparison without the notification path); IDLE (default 20) the idle
# seconds; SUBAGENT another daemon binary, LEGACY_LOG=1 for one of
# before the journal (the log seeded as notifications.json); KEEP a
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
trapoid=$BASE.0.5
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
  echo "     excp_type: ${EXCP:-both}, severity: 1, trap_no: 5}"
  echo "traps:"
  echo "  - {address: 127.0.0.1:$tport, version: v2c, community: public}"
} >"$tmp/storm.yaml"

# snmptrapd: one line per notification, its VarBinds numeric.
mkdir -p "$tmp/trapd"
printf 'disableAuthorization yes\nformat2 TRAP %%v\\n\n' >"$tmp/trapd/snmptrapd.conf"
snmptrapd -f -C -c "$tmp/trapd/snmptrapd.conf" -M /dev/null -m "" -Lf "$tmp/trapd/trapd.log" -n -On -X -p "$tmp/trapd/pid" \
  "udp:127.0.0.1:$tport" >"$tmp/trapd/out" 2>&1 &
pids+=($!)
for _ in $(seq 100); do grep -q "NET-SNMP version" "$tmp/trapd/trapd.log" 2>/dev/null && break; sleep 0.1; done

mkdir -p "$tmp/state"
seedfile=$tmp/state/notifications.journal
[ -z "${LEGACY_LOG:-}" ] || seedfile=$tmp/state/notifications.json
./bin/stormload -seed 10000 -journal "$seedfile" -base "$BASE" >/dev/null
"$SUBAGENT" run --config "$tmp/storm.yaml" --listen "127.0.0.1:$sport" --agentx none --run-dir "$tmp/run" \
  --state-dir "$tmp/state" --base-oid "$BASE" --log-level warn 2>"$tmp/subagent.log" &
pids+=($!); sub=$!
wait_served "127.0.0.1:$sport" 1.3.6.1.2.1.1.3.0
sa() { "$SUBAGENT" get --run-dir "$tmp/run" --state-dir "$tmp/state" "$@" 2>/dev/null || true; }
val() { local v; v=$(sa "$1" | awk '{print $2}'); echo "${v:-0}"; } # 0: not served (an older daemon)
rss() { awk '/VmRSS/{print $2}' "/proc/$sub/status"; }
wbytes() { awk '/^write_bytes/{print $2}' "/proc/$sub/io"; }
buckets=(delayle1 delayle5 delayle10 delayle20 delayle50 delayle100 delayle500 delayle1000 delaygt1000)
bounds=(1 5 10 20 50 100 500 1000 inf)
ntraps() { grep -cF "= OID: .$trapoid	" "$tmp/trapd/trapd.log" || true; }
counters() { # NAME: the counters now, one per line in $tmp/NAME
  {
    echo "wbytes $(wbytes)"
    for p in NotifLog/logged Hotset/storm/events Hotset/storm/notifyheld Agent/traps/suppressed Agent/traps/dropped Agent/traps/failed; do
      echo "$p $(val "$p")"
    done
    for b in "${buckets[@]}"; do echo "$b $(val "Agent/hotsets/$b")"; done
    echo "traps $(ntraps)"
  } >"$tmp/$1"
}
diffc() { # FROM TO KEY
  echo $(($(awk -v k="$3" '$1==k{print $2}' "$tmp/$2") - $(awk -v k="$3" '$1==k{print $2}' "$tmp/$1")))
}
pct() { # FROM TO FRACTION: the bucket bound the evaluation at that rank falls in
  local counts=() n=0 c i want cum=0
  for b in "${buckets[@]}"; do c=$(diffc "$1" "$2" "$b"); counts+=("$c"); n=$((n + c)); done
  [ "$n" -gt 0 ] || { echo "n/a"; return; }
  want=$(awk -v n="$n" -v f="$3" 'BEGIN {r = int(n * f + 0.999999); print (r < 1 ? 1 : r)}')
  for i in "${!counts[@]}"; do cum=$((cum + counts[i])); [ "$cum" -ge "$want" ] && { echo "<= ${bounds[i]}"; return; }; done
}
hist() { # FROM TO: evaluations, then "bound:count" of the buckets used
  local n=0 c out="" i=0
  for b in "${buckets[@]}"; do
    c=$(diffc "$1" "$2" "$b"); n=$((n + c))
    [ "$c" -gt 0 ] && out="$out ${bounds[i]}:$c"
    i=$((i + 1))
  done
  echo "$n${out:+ (}${out# }${out:+)}"
}
getoids="1.3.6.1.2.1.1.3.0,$BASE.12.1.0"
counters idle0
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
events=$(diffc before after Hotset/storm/events)
traps=$(diffc before after traps)
carried=$( (grep -F "= OID: .$trapoid	" "$tmp/trapd/trapd.log" || true) | (grep -o "14\.0\.12\.0 = Gauge32: [0-9]*" || true) | awk '{s += $4} END {print s + 0}')
ival_s=$(awk -v v="$ival" 'BEGIN {n = v + 0; if (v ~ /ms$/) n /= 1000; else if (v ~ /m$/) n *= 60; print n}')
bound=$(awk -v b="$burst" -v e="$elapsed" -v i="$ival_s" 'BEGIN {print b + int(e / i) + 1}')
perlog() { local w l; w=$(diffc "$1" "$2" wbytes); l=$(diffc "$1" "$2" NotifLog/logged); echo "$w / $l = $([ "$l" -gt 0 ] && echo $((w / l)) || echo -)"; }
probe() { awk -v f="$2" '{print $f}' "$tmp/$1.txt"; }
temps=$(find "$tmp/state" -name '*.tmp*' | wc -l)

echo "alarm storm: ${DUR} s, $HOT standing peer sets, $NEW new peer names/s; log_entries 10000 seeded full;" \
  "notify_burst $burst, notify_interval $ival, excp_type ${EXCP:-both}; daemon $SUBAGENT"
sed 1d "$tmp/stormload.txt"
printf '%-40s %-30s %-36s %s\n' "measure" "idle (${IDLE} s)" "storm (${elapsed%.*} s)" "target"
row() { printf '%-40s %-30s %-36s %s\n' "$1" "$2" "$3" "${4:-}"; }
row "evaluations (delay bound ms:count)" "$(hist idle0 before)" "$(hist before after)"
row "evaluation delay p50 (ms)" "$(pct idle0 before 0.5)" "$(pct before after 0.5)"
row "evaluation delay p99 (ms)" "$(pct idle0 before 0.99)" "$(pct before after 0.99)" "< 50"
row "evaluation delay, longest since start" "" "$(val Agent/hotsets/delaymaxms) ms (evalmaxms $(val Agent/hotsets/evalmaxms))"
row "write_bytes / logged = per notification" "$(perlog idle0 before)" "$(perlog before after)" "< 4096"
row "VmRSS (MB; storm: max, at the end)" "$((rss_idle / 1024))" "$((rss_max / 1024)), $((rss_end / 1024))" "< 100"
row "GET p50 (ms)" "$(probe idle 5)" "$(probe storm 5)"
row "GET p99 (ms)" "$(probe idle 8)" "$(probe storm 8)" "storm <= 2 x idle"
row "GET max (ms), GETs (errors)" "$(probe idle 11), $(probe idle 2) ($(probe idle 13))" "$(probe storm 11), $(probe storm 2) ($(probe storm 13))"
row "hotset events (Hotset/storm/events)" "" "$events"
row "hotset traps received by snmptrapd" "" "$traps" "<= $bound (burst + s / interval + 1)"
dropped=$(($(diffc before after Agent/traps/dropped) + $(diffc before after Agent/traps/failed)))
row "dropped or failed (Agent/traps, logged)" "" "$dropped" "(queue full: the log says so)"
row "held back (Hotset/storm/notifyheld)" "" "$(diffc before after Hotset/storm/notifyheld)" "= events - received - dropped = $((events - traps - dropped))"
row "Agent/traps/suppressed" "" "$(diffc before after Agent/traps/suppressed)" "= notifyheld"
row "hotsetSuppressed carried by those" "" "$carried" "<= held; the rest wait"
row "log: entries kept, journal bytes" "" "$(val NotifLog/entries), $(stat -c %s "$tmp/state/"notifications.* | head -1)" "10000"
row "temporary files in the state directory" "" "$temps" "0"
grep "level=ERROR" "$tmp/subagent.log" | head -5 || true
[ -z "${KEEP:-}" ] || cp -r "$tmp" "$KEEP" # the logs, for a look
