#!/usr/bin/env bash
# stock-host.sh [--make-test] DIR: the README's first day on a stock Debian
# 12, in DIR.
#
# A minimal Debian 12 root (debootstrap --variant=minbase) with Go (this
# machine's, bound read-only) and a copy of the checkout. With an empty
# environment (a new user's shell: none of the caller's GO, MAKEFLAGS, ...),
# in mount and PID namespaces of its own, it runs `make run &`, then every
# README block that reads or feeds the daemon as printed: "Looking at the
# data", "Names for managers" (with no "Cannot find module" or "Unknown
# Object Identifier"), RTime/LAN and ARM beside `make run`; then, `make
# run` stopped, the DDS block, which starts its own daemon. The Install and
# Production blocks need systemd and apt on a real host (packaging/ tests
# build and inspect the package instead).
#
# Quick mode (no flag; packaging's TestREADMEOnAStockDebianRoot, in `make
# test`): the root also holds what `make test` would have installed for the
# blocks (make, gcc, git, and net-snmp's client tools: Debian's `snmp`,
# whose snmp.conf says `mibs :`; no snmp-mibs-downloader, so no IETF
# modules), and a network namespace of its own (loopback only) keeps this
# machine out of the way, even a `make run` serving here.
#
# --make-test (`make stock-host`, CI after `make test`): the quick start
# whole. The root holds only make, git and ca-certificates; `make run &`,
# then, once it serves, `make test` as printed, which installs its own test
# tools with apt-get inside the root; then the `make run` daemon must still
# serve, the same one, and the blocks follow. apt needs the network, so the
# root shares this machine's: it refuses to start while something here
# serves 127.0.0.1:1161 (`make run`'s port), and packages start no services
# (policy-rc.d, as in Debian's container images). Minutes: about as long
# as `make test` here, plus the root and its packages.
#
# Needs root (debootstrap, chroot, namespaces) and Debian's mirror (apt's,
# as `make test-deps` uses). The Go module cache is this machine's, read
# only (GOPROXY=off): the build inside fetches nothing, so the cache must
# hold what it builds (`make test` here fills it with its tools' modules);
# its build cache is this machine's too, as for any go build here.
set -euo pipefail
mode=quick
[ "${1:-}" = --make-test ] && { mode=make-test; shift; }
dir=${1:?usage: stock-host.sh [--make-test] DIR (an empty directory of the caller)}
repo=$(cd "$(dirname "$0")/.." && pwd)
root=$dir/root
[ "$(id -u)" = 0 ] || { echo "stock-host: needs root (debootstrap, chroot, namespaces)" >&2; exit 2; }
command -v debootstrap >/dev/null || { echo "stock-host: no debootstrap: make test-deps installs it" >&2; exit 2; }
goroot=$(go env GOROOT)
modcache=$(go env GOMODCACHE)
gocache=$(go env GOCACHE)
if [ $mode = make-test ]; then
	# The root shares this machine's network (apt): `make run` inside needs its port.
	if ss -Hlnu 'sport = :1161' | grep -q .; then
		echo "stock-host: something here serves UDP port 1161 (a \`make run\`?); --make-test runs \`make run\` on this machine's network: stop it first" >&2
		exit 2
	fi
	packages=make,git,ca-certificates
else
	packages=make,gcc,libc6-dev,git,ca-certificates,snmp,iproute2,procps
fi

echo "==> stock-host: Debian 12 (minbase) with ${packages//,/, } in $root"
debootstrap --variant=minbase --include=$packages \
	bookworm "$root" >"$dir/debootstrap.log" 2>&1 || { tail -20 "$dir/debootstrap.log" >&2; exit 1; }
# Packages installed inside start no services (on this machine's network).
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d" && chmod 0755 "$root/usr/sbin/policy-rc.d"

# The checkout as it is (tracked and new files, not what .gitignore leaves
# out); --make-test's is a clone first (`make test` reads it with git), with
# the uncommitted changes on top. A tree that is no git checkout (the clone's
# copy here, in the root's own `make test`) is copied whole but for bin/.
mkdir -p "$root/usr/local/go" "$root/gomod" "$root/gocache"
if [ $mode = make-test ]; then
	git clone --quiet --no-hardlinks "$repo" "$root/src"
else
	mkdir -p "$root/src"
fi
if git -C "$repo" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	(cd "$repo" && git ls-files -z -co --exclude-standard | tar --null -T - -cf -) | tar -xf - -C "$root/src"
else
	tar -C "$repo" --exclude=./bin -cf - . | tar -xf - -C "$root/src"
fi

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
# agent_serves: the daemon answers its control socket with its own Agent context
# (peek reads the host directly, without it, when none serves).
agent_serves() { ./bin/subagent peek --depth 1 2>/dev/null | grep -q '^Agent/'; }
make run >/out/make-run.log 2>&1 &
serving=$!
# The build first (minutes on a loaded machine), then the daemon; bounded.
while [ $SECONDS -lt 900 ]; do
	agent_serves && break
	kill -0 $serving 2>/dev/null || break
	sleep 0.1
done
agent_serves || { echo "make run did not serve:"; tail -30 /out/make-run.log; exit 1; }
if [ "$1" = make-test ]; then
	sock=/run/subagent/subagent.sock
	before=$(stat -c '%i %Y' $sock)
	echo "==> stock-host: make test, beside make run (also in out/make-test.log)"
	start=$(date +%s)
	make test 2>&1 | tee /out/make-test.log || { echo "stock-host: make test failed after $(( $(date +%s) - start )) s"; exit 1; }
	echo "==> stock-host: make test passed in $(( $(date +%s) - start )) s"
	# The same daemon, untouched: make's child alive, its socket the same file.
	kill -0 $serving 2>/dev/null && agent_serves && [ "$(stat -c '%i %Y' $sock)" = "$before" ] ||
		{ echo "make test disturbed make run (socket $before, now $(stat -c '%i %Y' $sock 2>&1)):"; tail -30 /out/make-run.log; exit 1; }
fi
snmpget -v2c -c public -t 1 -r 0 127.0.0.1:1161 1.3.6.1.4.1.32473.1.1.1.4.0 >/dev/null || { echo "make run did not serve 127.0.0.1:1161:"; tail -30 /out/make-run.log; exit 1; }
run looking
run names
run rtimelan
run arm
kill $serving; wait $serving || true
run dds
EOF
mkdir -p "$dir/out"
if [ $mode = make-test ]; then
	echo "==> stock-host: make run, make test, then the README's blocks (mount and PID namespaces, this machine's network)"
	net=
else
	echo "==> stock-host: make run, then the README's blocks (namespaces of their own)"
	net=--net
fi
unshare --mount --propagation private $net --pid --fork bash -euc '
	[ -z "$7" ] || ip link set lo up
	# The root a mount point of its own, as a container'"'"'s is (its / in
	# mountinfo; unshare --propagation inside it).
	mount --bind "$1" "$1"
	mount -t proc proc "$1/proc"
	mount --rbind /sys "$1/sys"
	mount --rbind /dev "$1/dev"
	mount --bind -o ro "$2" "$1/usr/local/go"
	mount --bind -o ro "$3" "$1/gomod"
	mount --bind "$5" "$1/gocache"
	mkdir -p "$1/out" && mount --bind "$4" "$1/out"
	exec chroot "$1" env -i bash /first-day.sh "$6"' stock "$root" "$goroot" "$modcache" "$dir/out" "$gocache" $mode "$net"

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
