#!/bin/sh
# Installs what `make bench` compares against beyond the test tools: PCP's
# memory-mapped values library (the floor of the ARM benchmarks). Quiet when
# it is there; as root it installs it with apt-get, otherwise it prints the
# command and fails.
set -eu
packages="libpcp-mmv1-dev libpcp3-dev"
[ -f /usr/include/pcp/mmv_stats.h ] && exit 0
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
	echo "install-bench-deps: as root on Debian/Ubuntu, run:" >&2
	echo "  apt-get update && apt-get install -y --no-install-recommends $packages" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends $packages
