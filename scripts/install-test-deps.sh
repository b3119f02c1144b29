#!/bin/sh
# Installs what the integration tests run: net-snmp's snmpd, snmptrapd and
# command-line tools, smilint, a C compiler (cgo, -race) and a C++ one
# (libSpmi's header must take C++: TestGuideSamplesCompile), pysnmp (a
# third SNMPv3 manager for the responder's tests) and SNMPTT (the trap
# translator TestSnmpttTranslatesNotifications feeds from snmptrapd's
# traphandle; it brings the Net-SNMP Perl module), strace (the numbering
# file's fsync order), iproute2 (RTime/LAN's network namespaces),
# debootstrap (the README's first day on a stock Debian root,
# scripts/stock-host.sh), curl (docs/FLEET.md's query of Prometheus, run as
# printed) and Prometheus with promtool (deploy/prometheus: promtool's checks and the
# fleet test, which start their own Prometheus on loopback); then, if it
# can, collectd with its snmp plugin (collectd-core) for the collectd test.
# Quiet and successful when everything is already there; as root it
# installs the missing Debian packages, otherwise it prints the command and
# fails. collectd is optional: when it cannot be installed this says so and
# succeeds, and TestCollectdThroughSnmpPlugin skips naming what is missing.
set -eu

packages="snmpd snmp snmptrapd smitools gcc g++ libc6-dev curl python3-pysnmp4 snmptt strace iproute2 debootstrap prometheus"
# collectd-core alone starts no daemon (its service needs
# /etc/collectd/collectd.conf, which the collectd package ships); the
# snmp plugin's libnetsnmp comes with snmp above.
optional="collectd-core"
collectd_ok() {
	for f in snmp csv logfile; do [ -f "/usr/lib/collectd/$f.so" ] || return 1; done
	[ -x /usr/sbin/collectd ]
}
# install_optional installs collectd-core when missing, reporting (never
# failing) when it cannot.
install_optional() {
	collectd_ok && return 0
	echo "install-test-deps: missing: collectd(collectd-core), for TestCollectdThroughSnmpPlugin" >&2
	if (. "$(dirname "$0")/apt-lib.sh" && apt_install install-test-deps $optional) && collectd_ok; then
		echo "install-test-deps: installed $optional" >&2
	else
		echo "install-test-deps: could not install $optional; TestCollectdThroughSnmpPlugin will skip" >&2
	fi
}

# command -> Debian package providing it (snmpd/snmptrapd live in /usr/sbin).
missing=""
check() {
	if ! command -v "$1" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$1" ]; then
		missing="$missing $1($2)"
	fi
}
check_all() {
	missing=""
	check snmpd snmpd
	check snmptrapd snmptrapd
	check snmpwalk snmp
	check smilint smitools
	check cc gcc
	check c++ g++
	check curl curl
	check snmptt snmptt
	check strace strace
	check ip iproute2
	check debootstrap debootstrap
	check prometheus prometheus
	check promtool prometheus
}

# sanitizers_ok: cc builds programs under ASan, UBSan and TSan (make
# test's sanitizer phase, TestBatchesSurviveExitFromSignalHandler). Debian's
# gcc brings their runtimes with libgcc-N-dev; should they be missing,
# install_sanitizers installs that package for cc's version.
sanitizers_ok() {
	d=$(mktemp -d)
	printf 'int main(void) { return 0; }\n' >"$d/p.c"
	ok=0
	for san in address,undefined thread; do
		cc -fsanitize=$san -o "$d/p" "$d/p.c" >/dev/null 2>&1 || ok=1
	done
	rm -rf "$d"
	return $ok
}
install_sanitizers() {
	sanitizers_ok && return 0
	dev="libgcc-$(cc -dumpversion | cut -d. -f1)-dev"
	echo "install-test-deps: cc cannot build with -fsanitize=address,undefined or thread: installing $dev (libasan, libubsan, libtsan)" >&2
	(. "$(dirname "$0")/apt-lib.sh" && apt_install install-test-deps "$dev")
	sanitizers_ok || { echo "install-test-deps: cc still cannot build sanitized programs" >&2; exit 1; }
}

check_all
if [ -z "$missing" ]; then
	install_sanitizers
	install_optional
	exit 0
fi

echo "install-test-deps: missing:$missing" >&2
. "$(dirname "$0")/apt-lib.sh"
apt_install install-test-deps $packages

# The snmpd, snmptrapd, snmptt and prometheus packages may start system
# daemons; the tests run their own on temporary sockets and ports (snmptt
# standalone, from a traphandle; Prometheus on 127.0.0.1 with a temporary
# storage directory), so stop and disable those. None of this may fail:
# containers often have no init system at all.
for svc in snmpd snmptrapd snmptt prometheus; do
	if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
		systemctl disable --now "$svc" >/dev/null 2>&1 || true
	else
		if command -v service >/dev/null 2>&1; then
			service "$svc" stop >/dev/null 2>&1 || true
		elif [ -x "/etc/init.d/$svc" ]; then
			"/etc/init.d/$svc" stop >/dev/null 2>&1 || true
		fi
		if command -v update-rc.d >/dev/null 2>&1; then
			update-rc.d "$svc" disable >/dev/null 2>&1 || true
		fi
	fi
done

check_all
if [ -n "$missing" ]; then
	echo "install-test-deps: still missing after install:$missing" >&2
	exit 1
fi
echo "install-test-deps: installed $packages" >&2
install_sanitizers
install_optional
