# Shared by the end-to-end benchmarks (sourced, not run): a temporary
# directory cleaned up on exit, process bookkeeping, a real snmpd master on
# loopback, and per-process CPU time from /proc.
for t in snmpd snmpbulkwalk; do
  command -v "$t" >/dev/null || { echo "$0: $t missing; run 'make test-deps' (Debian packages snmpd, snmp)" >&2; exit 1; }
done
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  sleep 0.2
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT

free_udp_port() {
  python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# start_master PORT [snmpd options...]: sets $master (pid); AgentX socket
# $tmp/master.
start_master() {
  local port=$1; shift
  cat >"$tmp/master.conf" <<CONF
master agentx
agentXSocket unix:$tmp/master
agentXPerms 0700 0700
agentaddress udp:127.0.0.1:$port
rocommunity public 127.0.0.1
persistentDir $tmp/persist-master
CONF
  SNMP_PERSISTENT_DIR=$tmp/persist-master snmpd -f -Lf "$tmp/master.log" -C -c "$tmp/master.conf" "$@" -p "$tmp/master.pid" >"$tmp/master.out" 2>&1 &
  pids+=($!); master=$!
  for _ in $(seq 100); do [ -S "$tmp/master" ] && break; sleep 0.1; done
  [ -S "$tmp/master" ] || { echo "$0: master did not open its AgentX socket" >&2; cat "$tmp/master.log" >&2; exit 1; }
}

# utime+stime in clock ticks; fields counted after the ")" that ends the
# command name, which may itself contain spaces.
cpu() { sed 's/.*) //' "/proc/$1/stat" | awk '{print $12+$13}'; }
hz=$(getconf CLK_TCK)

# Context switches (voluntary and not) of every thread of a process: a
# wake-up each, the unit of what a request costs here.
ctxsw() { cat /proc/"$1"/task/*/status 2>/dev/null | awk '/ctxt_switches/ {s += $2} END {print s + 0}'; }

# median COLUMN NAME: the median of a column of $tmp/results for NAME.
median() {
  grep "^$2 " "$tmp/results" | awk -v c="$1" '{print $c}' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}

# walk ADDR OID: bulk-walks OID at ADDR, prints the varbinds under it;
# the version and credentials are walk_opts (v2c, community public, unless
# a script sets it).
walk_opts=(-v2c -c public)
walk() { snmpbulkwalk "${walk_opts[@]}" -Cr50 -t 10 -r 0 -On "$1" "$2" 2>/dev/null | grep -v " = No more variables" | grep -c "^\.$2\." || true; }

# measure NAME ADDR OID SUBAGENT-PID MASTER-PID|-: WALKS walks; appends a
# line to $tmp/results: varbinds per walk, walks, varbinds per second, CPU
# seconds per 10,000 varbinds of the subagent and of the master, and their
# context switches per varbind.
measure() {
  local t0 t1 s0 s1 m0=0 m1=0 c0 c1 d0=0 d1=0 total=0
  s0=$(cpu "$4"); c0=$(ctxsw "$4"); [ "$5" = - ] || { m0=$(cpu "$5"); d0=$(ctxsw "$5"); }; t0=$(date +%s.%N)
  for _ in $(seq "$WALKS"); do total=$((total + $(walk "$2" "$3"))); done
  t1=$(date +%s.%N); s1=$(cpu "$4"); c1=$(ctxsw "$4"); [ "$5" = - ] || { m1=$(cpu "$5"); d1=$(ctxsw "$5"); }
  awk -v name="$1" -v n="$total" -v w="$WALKS" -v dt="$(echo "$t1 - $t0" | bc)" \
      -v sc="$((s1 - s0))" -v mc="$((m1 - m0))" -v hz="$hz" -v scs="$((c1 - c0))" -v mcs="$((d1 - d0))" 'BEGIN {
    printf "%-28s %8d %6d %12.0f %14.3f %14.3f %8.2f %8.2f\n", name, n/w, w, n/dt, (sc/hz)/(n/10000), (mc/hz)/(n/10000), scs/n, mcs/n }' | tee -a "$tmp/results"
}

# header [WHO]: WHO names the measured process (sub: the subagent).
header() { local w=${1:-sub}; printf "%-28s %8s %6s %12s %14s %14s %8s %8s\n" "walk" "vb/walk" "walks" "varbinds/s" "$w-cpu-s/10k" "master-cpu-s/10k" "$w-cs/vb" "mst-cs/vb"; }

# medians NAME...: the median line of each NAME over the rounds.
medians() {
  echo "median of $ROUNDS rounds:"
  for who in "$@"; do
    for col in 2 4 5 6 7 8; do median "$col" "$who"; done | paste -sd' ' |
      awk -v who="$who" '{printf "%-28s %8d %6s %12.0f %14.3f %14.3f %8.2f %8.2f\n", who, $1, "-", $2, $3, $4, $5, $6}'
  done
}

# start_snmpd DIR PORT [snmpd options...]: another snmpd master, all of
# its files in DIR (AgentX socket DIR/master), UDP on 127.0.0.1:PORT, no
# SMUX port; sets $snmpd (pid). For scripts that need several masters.
start_snmpd() {
  local dir=$1 port=$2; shift 2
  mkdir -p "$dir"
  cat >"$dir/snmpd.conf" <<CONF
master agentx
agentXSocket unix:$dir/master
agentXPerms 0700 0700
agentaddress udp:127.0.0.1:$port
rocommunity public 127.0.0.1
persistentDir $dir/persist
CONF
  SNMP_PERSISTENT_DIR=$dir/persist snmpd -f -Lf "$dir/snmpd.log" -C -c "$dir/snmpd.conf" -I -smux "$@" -p "$dir/snmpd.pid" >"$dir/snmpd.out" 2>&1 &
  pids+=($!); snmpd=$!
  for _ in $(seq 100); do [ -S "$dir/master" ] && break; sleep 0.1; done
  [ -S "$dir/master" ] || { echo "$0: snmpd in $dir did not open its AgentX socket" >&2; cat "$dir/snmpd.log" >&2; exit 1; }
}

# start_subagent DIR [bin/subagent run flags...]: the daemon on its shipped
# settings, its run and state directories and its log in DIR; sets $sub
# (pid).
start_subagent() {
  local dir=$1; shift
  mkdir -p "$dir"
  ./bin/subagent run --run-dir "$dir/run" --state-dir "$dir/state" --log-level warn "$@" 2>"$dir/subagent.log" &
  pids+=($!); sub=$!
}

# wait_served ADDR OID: waits (at most 30 s) until ADDR answers a GET of OID.
wait_served() {
  for _ in $(seq 150); do
    snmpget -v2c -c public -t 1 -r 0 "$1" "$2" 2>/dev/null | grep -qv "No Such" && return 0
    sleep 0.2
  done
  echo "$0: $1 did not serve $2 within 30 s" >&2
  exit 1
}
