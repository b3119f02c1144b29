#!/usr/bin/env bash
# stock-host.sh DIR: the README's first day on a stock Debian 12, in DIR.
#
# A minimal Debian 12 root (debootstrap --variant=minbase) holds only what
# the README's quick start asks for, Go (this machine's, bound read-only),
# and what `make test` would have installed for the blocks that follow:
# make, gcc and git, and net-snmp's client tools (Debian's `snmp`, whose
# snmp.conf says `mibs :`; no snmp-mibs-downloader, so no IETF modules).
# With an empty environment (a new user's shell: none of the caller's GO,
# MAKEFLAGS, ...), in mount, network and PID namespaces of its own (loopback only, nothing
# of this machine changed or in the way: not even a `make run` serving
# here), a copy of the checkout runs `make run &`, then every README block
# that reads or feeds the daemon as printed: "Looking at the data", "Names
# for managers" (with no "Cannot find module" or "Unknown Object
# Identifier"), RTime/LAN and ARM beside `make run`; then, `make run`
# stopped, the DDS block, which starts its own daemon. The Install and
# Production blocks need systemd and apt on a real host (packaging/ tests
# build and inspect the package instead).
#
# Needs root (debootstrap, chroot, namespaces) and Debian's mirror (apt's,
# as `make test-deps` uses). The Go module cache is this machine's, read
# only (GOPROXY=off): the build inside fetches nothing; its build cache is
# this machine's too, as for any go build here.
set -euo pipefail
dir=${1:?usage: stock-host.sh DIR (an empty directory of the caller)}
repo=$(cd "$(dirname "$0")/.." && pwd)
root=$dir/root
[ "$(id -u)" = 0 ] || { echo "stock-host: needs root (debootstrap, chroot, namespaces)" >&2; exit 2; }
command -v debootstrap >/dev/null || { echo "stock-host: no debootstrap: make test-deps installs it" >&2; exit 2; }
goroot=$(go env GOROOT)
modcache=$(go env GOMODCACHE)
gocache=$(go env GOCACHE)

echo "==> stock-host: Debian 12 (minbase) with make, gcc, git and snmp in $root"
debootstrap --variant=minbase --include=make,gcc,libc6-dev,git,ca-certificates,snmp,iproute2,procps \
	bookworm "$root" >"$dir/debootstrap.log" 2>&1 || { tail -20 "$dir/debootstrap.log" >&2; exit 1; }

# The checkout as it is (tracked and new files, not what .gitignore leaves out).
mkdir -p "$root/src" "$root/usr/local/go" "$root/gomod" "$root/gocache"
(cd "$repo" && git ls-files -z -co --exclude-standard | tar --null -T - -cf -) | tar -xf - -C "$root/src"

# The README's blocks, extracted as printed: block N under heading H.
block() {
	awk -v h="$1" -v n="$2" '
		/^#+ / { cur = $0; k = 0; next }
		/^```/ { if (inb) { inb = 0; next } if (cur == h) { k++; if (k == n) { inb = 1; next } } }
		inb { print }' "$repo/README.md"
}
for spec in "## Looking at the data|1|looking" "## Names for managers: one MIB for every host|1|names" \
	"## Network response time: RTime/LAN|1|rtimelan" "## Application response times: ARM 2.0|1|arm" \
	"## Adding your own statistics: Dynamic Data Suppliers|1|dds"; do
	IFS='|' read -r h n name <<<"$spec"
	block "$h" "$n" >"$root/src/.block-$name.sh"
	[ -s "$root/src/.block-$name.sh" ] || { echo "stock-host: README.md has no block $n under \"$h\"" >&2; exit 1; }
done

cat >"$root/first-day.sh" <<'EOF'
set -euo pipefail
export PATH=/usr/local/go/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root GOMODCACHE=/gomod GOCACHE=/gocache GOFLAGS=-mod=mod GOPROXY=off GOTOOLCHAIN=local
cd /src
run() { # run NAME: the block as printed, its output kept for the checks
	echo "==> stock-host: README block $1"
	bash -e ".block-$1.sh" >"/out/$1.out" 2>"/out/$1.err" || { echo "block $1 failed:"; cat "/out/$1.out" "/out/$1.err"; exit 1; }
}
make run >/out/make-run.log 2>&1 &
serving=$!
# The build first (minutes on a loaded machine), then the responder; bounded.
for i in $(seq 3000); do
	snmpget -v2c -c public -t 0.2 -r 0 127.0.0.1:1161 1.3.6.1.4.1.32473.1.1.1.4.0 >/dev/null 2>&1 && break
	kill -0 $serving 2>/dev/null || break
	sleep 0.1
done
snmpget -v2c -c public -t 1 -r 0 127.0.0.1:1161 1.3.6.1.4.1.32473.1.1.1.4.0 >/dev/null || { echo "make run did not serve 127.0.0.1:1161:"; tail -30 /out/make-run.log; exit 1; }
run looking
run names
run rtimelan
run arm
kill $serving; wait $serving || true
run dds
EOF
mkdir -p "$dir/out"
echo "==> stock-host: make run, then the README's blocks (namespaces of their own)"
unshare --mount --propagation private --net --pid --fork bash -euc '
	ip link set lo up
	mount -t proc proc "$1/proc"
	mount --rbind /sys "$1/sys"
	mount --rbind /dev "$1/dev"
	mount --bind -o ro "$2" "$1/usr/local/go"
	mount --bind -o ro "$3" "$1/gomod"
	mount --bind "$5" "$1/gocache"
	mkdir -p "$1/out" && mount --bind "$4" "$1/out"
	exec chroot "$1" env -i bash /first-day.sh' stock "$root" "$goroot" "$modcache" "$dir/out" "$gocache"

# The checks on what the blocks printed.
fail=0
for f in "$dir"/out/*.err "$dir"/out/*.out; do
	if grep -Hn -e 'Cannot find module' -e 'Unknown Object Identifier' "$f"; then fail=1; fi
done
grep -q 'SUBAGENT-MIB::memRealPctFree.0 = ' "$dir/out/names.out" || { echo "stock-host: snmpwalk of memReal printed no memRealPctFree.0" >&2; fail=1; }
grep -Eq '^ *index +' "$dir/out/names.out" || grep -q 'diskTable' "$dir/out/names.out" || { echo "stock-host: snmptable printed no diskTable" >&2; fail=1; }
grep -q 'DDS/IBM/Moretest/Bingo/problems' "$dir/out/dds.out" || { echo "stock-host: the DDS block read no Bingo" >&2; fail=1; }
grep -q 'RTime/ARM/ARMsampleprogram/Sample_transaction/count' "$dir/out/arm.out" || { echo "stock-host: the ARM block read no count" >&2; fail=1; }
[ $fail = 0 ] && echo "==> stock-host: every block ran as printed"
exit $fail
