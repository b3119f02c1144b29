#!/usr/bin/env bash
# How fresh are the values a manager reads, and what does freshness cost?
# The daemons run on their shipped settings (refresh.min_age 1s,
# snmp_wait 500ms, Proc read apart every 5s) on this host's /proc.
# bin/pollage (internal/tools/pollage) uses the host's CPU times as a
# clock: the sum of /proc/stat's eight CPU times grows by 100 a second
# per processor, so the sum a GET returns tells how old it is. Parts:
#   ages      polls every 1, 10, 60 and 300 s (20, 10, 5, 3 polls) and
#             every 6 and 12 s (10 polls): CPU/total's age and the GET's
#             latency from the standalone responder, through snmpd
#             (AgentX), and snmpd's own UCD-SNMP-MIB ssCpuRaw* beside
#             them. Each period has its own daemons and snmpd (a faster
#             poller would keep a slower one's values young); the periods
#             run at the same time (about 16 minutes).
#   procage   polls every 6 and 12 s of Proc/pid/<a yes process>: the age
#             of the contexts read apart, the process's CPU time as clock.
#   exporter  snmp_exporter (module subagent) scraped twice 15 s apart,
#             without load of ours and with `yes` loads (one a processor)
#             started between the scrapes: CPU busy % from the scrapes
#             against /proc/stat's at the scrapes.
#   holes     20 snmptable walks of procPidTable, one a second, while 50
#             processes a second start and exit: rows with missing cells;
#             snmpd's own hrSWRunTable beside it.
#   latency   GETs that find the values older than min_age (1.5 s after
#             the last) against GETs 100 ms later, on this host, with
#             100,000 DDS statistics registered, and with 5,000 more
#             processes (then also 5 procPidTable walks of 5,000 rows
#             while processes come and go); the daemon's own refresh
#             times beside: Agent/refreshms in each answer (the reading
#             the GET waited for) and from bin/subagent get, with each
#             provider's Agent/prov/*/collectms.
# Usage: scripts/bench-fresh.sh [PART...]   (default: all, about 35 minutes;
# every wait is bounded)
set -euo pipefail
cd "$(dirname "$0")/.."
PARTS=${*:-ages procage exporter holes latency}
BASE=${BASE:-1.3.6.1.4.1.32473.1}
CPU_USER=$BASE.1.0.1.0
NPROCS=$BASE.10.5.0
REFRESHMS=$BASE.12.6.0 # Agent/refreshms: in an answer, how long the refresh it waited for read
go build -o bin/subagent ./cmd/subagent
go build -o bin/pollage ./internal/tools/pollage
go build -o bin/ddsload ./samples/ddsload

source scripts/bench-lib.sh
# net-snmp's tools keep their persistent files here, not in /var/lib/snmp.
export SNMP_PERSISTENT_DIR=$tmp/persist-tools
has() { [[ " $PARTS " == *" $1 "* ]]; }
echo "bench-fresh: commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(nproc) processors, $(ls /proc | grep -c '^[0-9]') processes, $(date -u +%FT%TZ)"

# one_of_each DIR: an snmpd master and two daemons on shipped settings in
# DIR: one attached to the master (AgentX, no responder), one standalone
# (responder only); sets $mport and $sport (the master's and the
# standalone responder's UDP ports).
one_of_each() {
  mport=$(free_udp_port)
  start_snmpd "$1" "$mport"
  start_subagent "$1/agentx" --agentx "unix:$1/master" --listen none
  sport=$(free_udp_port)
  start_subagent "$1/standalone" --agentx none --listen "127.0.0.1:$sport"
}

# both DIR: an snmpd master and one daemon serving through it and through
# its own responder; sets $mport, $sport and $run (its run directory).
both() {
  mport=$(free_udp_port)
  start_snmpd "$1" "$mport"
  sport=$(free_udp_port)
  start_subagent "$1/sub" --agentx "unix:$1/master" --listen "127.0.0.1:$sport"
  run=$1/sub/run
  wait_served "127.0.0.1:$sport" "$CPU_USER"
  wait_served "127.0.0.1:$mport" "$CPU_USER"
}

# stop PID...: stops them and forgets them (so that the cleanup never
# signals a PID the system has given to another process since).
stop() {
  local p
  declare -A gone=()
  for p in "$@"; do kill "$p" 2>/dev/null || true; gone[$p]=1; done
  for p in "$@"; do wait "$p" 2>/dev/null || true; done
  local keep=()
  for p in "${pids[@]}"; do [ -n "${gone[$p]:-}" ] || keep+=("$p"); done
  pids=("${keep[@]}")
}
# A part stops what it started: part_begin, then part_end.
part_begin() { mark=${#pids[@]}; }
part_end() { stop "${pids[@]:mark}"; }

# ietf_base: the four IETF modules SUBAGENT-MIB imports, in $tmp/ietf-base
# (docs/MIB.md).
ietf_base() {
  mkdir -p "$tmp/ietf-base"
  cp /usr/share/snmp/mibs/ietf/SNMPv2-SMI /usr/share/snmp/mibs/ietf/SNMPv2-TC \
    /usr/share/snmp/mibs/ietf/SNMPv2-CONF /usr/share/snmp/mibs/ietf/HCNUM-TC "$tmp/ietf-base/"
}

if has ages; then
  echo "== ages: value age and GET latency by polling period"
  part_begin
  pollers=()
  for spec in 1:20 10:10 60:5 300:3 6:10 12:10; do
    p=${spec%:*} n=${spec#*:}
    one_of_each "$tmp/age$p"
    ./bin/pollage age -period "${p}s" -n "$n" -base "$BASE" -refresh "$REFRESHMS" -title "-- polled every $p s" \
      "standalone=127.0.0.1:$sport/subagent" "through-snmpd=127.0.0.1:$mport/subagent" "snmpd-ssCpuRaw=127.0.0.1:$mport/ucd" \
      >"$tmp/age$p.out" 2>"$tmp/age$p.err" &
    pids+=($!); pollers+=($!)
    sleep 0.5 # the periods' polls do not coincide
  done
  for p in "${pollers[@]}"; do wait "$p" || { echo "$0: a poller failed:" >&2; cat "$tmp"/age*.err >&2; exit 1; }; done
  for p in 1 10 60 300 6 12; do cat "$tmp/age$p.out"; done
  part_end
fi

if has procage; then
  echo "== procage: age of Proc/pid (read apart: refresh.apart); the clock is a yes process's CPU time"
  part_begin
  yes >/dev/null &
  pids+=($!); yes=$!
  pollers=()
  for spec in 6:10 12:10; do
    p=${spec%:*} n=${spec#*:}
    one_of_each "$tmp/procage$p"
    ./bin/pollage age -period "${p}s" -n "$n" -base "$BASE" -refresh "$REFRESHMS" -title "-- Proc/pid/$yes/{usercpu,syscpu} polled every $p s" \
      "standalone=127.0.0.1:$sport/proc:$yes" "through-snmpd=127.0.0.1:$mport/proc:$yes" \
      >"$tmp/procage$p.out" 2>"$tmp/procage$p.err" &
    pids+=($!); pollers+=($!)
    sleep 0.5
  done
  for p in "${pollers[@]}"; do wait "$p" || { echo "$0: a poller failed:" >&2; cat "$tmp"/procage*.err >&2; exit 1; }; done
  for p in 6 12; do cat "$tmp/procage$p.out"; done
  part_end
fi

if has exporter; then
  echo "== exporter: CPU busy % from two scrapes 15 s apart against /proc/stat"
  part_begin
  sh scripts/install-exporter.sh bin/tools
  ietf_base
  bin/tools/generator generate -m "$tmp/ietf-base" -m MIBs -g MIBs/snmp_exporter/generator.yml -o "$tmp/snmp.yml" 2>"$tmp/generator.log"
  both "$tmp/exporter"
  wport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  bin/tools/snmp_exporter --config.file="$tmp/snmp.yml" --web.listen-address="127.0.0.1:$wport" >"$tmp/exporter.log" 2>&1 &
  pids+=($!); exporter=$!
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$wport/metrics" >/dev/null && break; sleep 0.1; done
  url=http://127.0.0.1:$wport/snmp
  for load in 0 "$(nproc)"; do
    for fe in "standalone 127.0.0.1:$sport" "through-snmpd 127.0.0.1:$mport"; do
      set -- $fe
      name=$1-no-load; [ "$load" = 0 ] || name="$1-yes-x$load"
      ./bin/pollage scrape -exporter "$url" -target "$2" -gap 15s -pairs 3 -load "$load" -name "$name"
    done
  done
  part_end
fi

# holes NAME ADDR WALKS EVERY MIBS MODULE TABLE: snmptable walks while 50
# processes a second start and exit.
holes() {
  ./bin/pollage holes -walks "$3" -every "$4" -churn 50 -name "$1" -- \
    snmptable -v2c -c public -t 10 -r 0 -M "$5" -m "$6" -Ci -CH -Cf '|' "$2" "$6::$7"
}

if has holes; then
  echo "== holes: snmptable procPidTable while 50 processes a second start and exit"
  part_begin
  ietf_base
  both "$tmp/holes"
  holes standalone "127.0.0.1:$sport" 20 1s "$tmp/ietf-base:MIBs" SUBAGENT-MIB procPidTable
  holes through-snmpd "127.0.0.1:$mport" 20 1s "$tmp/ietf-base:MIBs" SUBAGENT-MIB procPidTable
  holes snmpd-hrSWRunTable "127.0.0.1:$mport" 20 1s /usr/share/snmp/mibs/ietf HOST-RESOURCES-MIB hrSWRunTable
  part_end
fi

# refresh_times RUN: the daemon's refresh times, medians of 5 readings
# 1.5 s apart. Each reading has the values read first: its Agent/refreshms
# is that reading of the host's contexts (Agent is read after them), and
# collectms each provider's last reading (Proc's in the background, DDS's
# when registrations changed).
refresh_times() {
  local paths
  paths="Agent/refreshms $(./bin/subagent peek --run-dir "$1" --oid Agent/prov/ | awk '$1 ~ /\/collectms$/ {print $1}' | paste -sd' ')"
  for _ in 1 2 3 4 5; do
    sleep 1.5
    # shellcheck disable=SC2086
    ./bin/subagent get --run-dir "$1" $paths
  done | awk '{v[$1] = v[$1] " " $2} END {for (k in v) print k, v[k]}' | sort |
    while read -r k vals; do
      printf '%-26s median %s ms (%s)\n' "$k" "$(echo "$vals" | tr ' ' '\n' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')" "$vals"
    done
}

# NAME=... EXTRA=OID,... latency: GETs of CPU/total, the EXTRA OIDs and
# Agent/refreshms 1.5 s after the previous (stale: min_age passed) and
# 100 ms later (fresh), 20 each, from the standalone responder then
# through snmpd, one at a time; then the daemon's refresh times.
latency() {
  for fe in "standalone 127.0.0.1:$sport" "through-snmpd 127.0.0.1:$mport"; do
    set -- $fe
    ./bin/pollage age -period 1.5s -n 20 -fresh 100ms -base "$BASE" -extra "$EXTRA" -refresh "$REFRESHMS" -title "-- $NAME: $1" "$1=$2/subagent"
  done
  echo "-- $NAME: the daemon's refresh times (bin/subagent get)"
  refresh_times "$run"
}

if has latency; then
  echo "== latency: GETs that must wait for a refresh against GETs of fresh values"
  part_begin
  ietf_base
  both "$tmp/latency"
  NAME="this host ($(ls /proc | grep -c '^[0-9]') processes)" EXTRA=$NPROCS latency

  SUBAGENT_RUN_DIR=$run ./bin/ddsload -suppliers 100 -stats 1000 -per-context 1000 -dir "$tmp" >"$tmp/ddsload.log" 2>&1 &
  pids+=($!); load=$!
  for _ in $(seq 300); do grep -q registered "$tmp/ddsload.log" && break; sleep 0.1; done
  grep -q registered "$tmp/ddsload.log" || { echo "$0: ddsload did not register" >&2; cat "$tmp/ddsload.log" >&2; exit 1; }
  dds= served=0
  for _ in $(seq 120); do
    dds=$(snmpgetnext -v2c -c public -On "127.0.0.1:$sport" "$BASE.99" | awk -v p=".$BASE.99." 'index($1, p) == 1 {print substr($1, 2)}')
    served=$(snmpbulkwalk -v2c -c public -Cr50 -On "127.0.0.1:$sport" "$BASE.99" | grep -c "^\.$BASE\.99\." || true)
    [ -n "$dds" ] && [ "$served" -eq 100000 ] && break
    sleep 0.5
  done
  [ -n "$dds" ] && [ "$served" -eq 100000 ] || { echo "$0: $served DDS statistics served within 60 s, want 100000" >&2; exit 1; }
  NAME="100,000 DDS statistics" EXTRA=$NPROCS,$dds latency
  stop "$load"

  sleepers=()
  for _ in $(seq 5000); do sleep 600 & sleepers+=($!); done
  pids+=("${sleepers[@]}")
  # Served once the last one has its row (Proc/pid/<pid>/name).
  wait_served "127.0.0.1:$sport" "$BASE.10.100.${sleepers[-1]}.1.0"
  NAME="5,000 more processes ($(ls /proc | grep -c '^[0-9]') in all)" EXTRA=$NPROCS latency
  echo "-- 5,000 more processes: snmptable procPidTable while 50 processes a second start and exit"
  holes standalone "127.0.0.1:$sport" 5 0 "$tmp/ietf-base:MIBs" SUBAGENT-MIB procPidTable
  holes through-snmpd "127.0.0.1:$mport" 5 0 "$tmp/ietf-base:MIBs" SUBAGENT-MIB procPidTable
  part_end
fi
