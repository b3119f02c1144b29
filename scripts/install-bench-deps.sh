#!/bin/sh
# Installs what `make bench` compares against beyond the test tools: PCP's
# memory-mapped values library (the floor of the ARM benchmarks) and PCP's
# trace library with pmcd and the trace PMDA (the peer; the benchmark runs
# its own pmcd). Quiet when they are there; as root it installs them with
# apt-get, otherwise it prints the command and fails.
set -eu
packages="libpcp-mmv1-dev libpcp3-dev libpcp-trace2-dev pcp"
[ -f /usr/include/pcp/mmv_stats.h ] && [ -f /usr/include/pcp/trace.h ] &&
	[ -x /usr/lib/pcp/bin/pmcd ] && [ -x /var/lib/pcp/pmdas/trace/pmdatrace ] && exit 0
# pcp's postinst calls systemctl itself, which fails where systemd is not
# running (containers); offline, systemctl skips the reload and the starts.
[ -d /run/systemd/system ] || export SYSTEMD_OFFLINE=1
. "$(dirname "$0")/apt-lib.sh"
apt_install install-bench-deps $packages
