#!/usr/bin/env bash
# SNMPv3 walk benchmark: the daemon's standalone responder beside a native
# snmpd, both on loopback with the same SNMPv3 user (SHA-256/AES-128,
# authPriv) and v2c community, each on its shipped settings. Like is
# compared with like, as in scripts/bench-walk.sh: our procPidTable
# (Proc/pid, 8 statistics per process) and snmpd's own hrSWRunTable (7
# columns per process) have one row per process of the same host; EXTRA
# `sleep` processes make both tables that many rows longer. Each table is
# bulk-walked (snmpbulkwalk -Cr50, one start per walk, key localization
# and engine discovery included for v3) WALKS times at authPriv, then with
# v2c for reference. Reported per walk: varbinds per second (wall clock)
# and the server's CPU seconds per 10,000 varbinds (utime+stime from
# /proc) and context switches per varbind (there is no master: its
# columns stay 0). MAX_MSG_SIZE=N sets our snmp.max_msg_size (shipped:
# 1472, one Ethernet frame; snmpd answers up to the manager's 65507).
# Usage: scripts/bench-v3-walk.sh [WALKS [ROUNDS [EXTRA]]]   (defaults 20, 3
# and 0; every wait is bounded). The servers are measured alternately,
# ROUNDS times; the last lines are the medians and the ratios.
set -euo pipefail
cd "$(dirname "$0")/.."
WALKS=${1:-20}
ROUNDS=${2:-3}
EXTRA=${3:-0}
BASE=${BASE:-1.3.6.1.4.1.32473.1}
HRSWRUN=1.3.6.1.2.1.25.4.2
PROCPID=$BASE.10.100
USER=bench AUTH=bench-auth-pass PRIV=bench-priv-pass
V3=(-v3 -l authPriv -u "$USER" -a SHA-256 -A "$AUTH" -x AES -X "$PRIV")
V2C=(-v2c -c public)
[ -x bin/subagent ] || go build -o bin/subagent ./cmd/subagent

source scripts/bench-lib.sh
sleepers=()
for _ in $(seq "$EXTRA"); do sleep 3600 & sleepers+=($!); done
pids+=("${sleepers[@]}")

nport=$(free_udp_port)
mkdir -p "$tmp/snmpd"
cat >"$tmp/snmpd/snmpd.conf" <<CONF
agentaddress udp:127.0.0.1:$nport
createUser $USER SHA-256 $AUTH AES $PRIV
rouser $USER priv
rocommunity public 127.0.0.1
persistentDir $tmp/snmpd/persist
CONF
SNMP_PERSISTENT_DIR=$tmp/snmpd/persist snmpd -f -Lf "$tmp/snmpd/snmpd.log" -C -c "$tmp/snmpd/snmpd.conf" -I -smux \
  -p "$tmp/snmpd/snmpd.pid" >"$tmp/snmpd/snmpd.out" 2>&1 &
pids+=($!); native=$!

oport=$(free_udp_port)
while [ "$oport" = "$nport" ]; do oport=$(free_udp_port); done
mkdir -p "$tmp/ours"
cat >"$tmp/ours/subagent.yaml" <<CONF
snmp:
  users:
    - user: $USER
      auth_protocol: SHA256
      auth_password: $AUTH
      priv_protocol: AES
      priv_password: $PRIV
${MAX_MSG_SIZE:+  max_msg_size: $MAX_MSG_SIZE}
CONF
start_subagent "$tmp/ours" --config "$tmp/ours/subagent.yaml" --agentx none --listen "127.0.0.1:$oport" --base-oid "$BASE" ${SUBAGENT_ARGS:-}
ours=$sub

n=127.0.0.1:$nport o=127.0.0.1:$oport
for _ in $(seq 100); do
  walk_opts=("${V3[@]}")
  [ "$(walk "$o" "$PROCPID")" -gt 0 ] && [ "$(walk "$n" "$HRSWRUN")" -gt 0 ] && break
  sleep 0.1
done
for t in "$o $PROCPID" "$n $HRSWRUN"; do
  set -- $t
  for opts in V3 V2C; do
    declare -n a=$opts; walk_opts=("${a[@]}"); unset -n a
    [ "$(walk "$1" "$2")" -gt 0 ] || { echo "bench-v3-walk: $1 serves nothing under $2 ($opts) within 10 s; logs:" >&2; cat "$tmp"/*/*.log >&2; exit 1; }
  done
done

procs=(/proc/[0-9]*)
echo "processes: ${#procs[@]} ($EXTRA sleep added); snmpbulkwalk ${V3[*]} -Cr50 -t 10 -r 0 -On ADDR TABLE"
header server
for r in $(seq "$ROUNDS"); do
  walk_opts=("${V3[@]}")
  measure "ours-v3-procPidTable" "$o" "$PROCPID" "$ours" -
  measure "snmpd-v3-hrSWRunTable" "$n" "$HRSWRUN" "$native" -
  walk_opts=("${V2C[@]}")
  measure "ours-v2c-procPidTable" "$o" "$PROCPID" "$ours" -
  measure "snmpd-v2c-hrSWRunTable" "$n" "$HRSWRUN" "$native" -
done
medians ours-v3-procPidTable snmpd-v3-hrSWRunTable ours-v2c-procPidTable snmpd-v2c-hrSWRunTable
for v in v3 v2c; do
  awk -v v="$v" -v ov="$(median 4 "ours-$v-procPidTable")" -v nv="$(median 4 "snmpd-$v-hrSWRunTable")" \
      -v oc="$(median 5 "ours-$v-procPidTable")" -v nc="$(median 5 "snmpd-$v-hrSWRunTable")" 'BEGIN {
    printf "%s: ours/snmpd varbinds/s %.2fx; snmpd/ours CPU per varbind %.2fx\n", v, ov/nv, (oc > 0 ? nc/oc : 0) }'
done
