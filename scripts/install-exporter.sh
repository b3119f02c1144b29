#!/bin/sh
# Installs Prometheus's snmp_exporter and its config generator, built from
# source at a pinned version, into a project-local directory (default
# bin/tools), for the Prometheus integration test (docs/MIB.md). The
# generator parses MIBs with net-snmp through cgo, so it needs Debian's
# libsnmp-dev and a C compiler. Quiet and quick when both are there; as root
# it installs the missing Debian packages, otherwise it prints the command
# and fails.
set -eu

dir=${1:-bin/tools}
version=v0.30.1
exporter=github.com/prometheus/snmp_exporter@$version
generator=github.com/prometheus/snmp_exporter/generator@$version

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
stamp="$dir/.snmp_exporter-version"
if [ -x "$dir/snmp_exporter" ] && [ -x "$dir/generator" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$version" ]; then
	exit 0
fi

# The generator's cgo build needs net-snmp's headers and library.
if [ ! -f /usr/include/net-snmp/net-snmp-config.h ] || ! command -v cc >/dev/null 2>&1; then
	packages="libsnmp-dev gcc libc6-dev"
	if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
		echo "install-exporter: the generator needs net-snmp's headers and a C compiler; as root on Debian/Ubuntu, run:" >&2
		echo "  apt-get update && apt-get install -y --no-install-recommends $packages" >&2
		exit 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	apt-get install -y -q --no-install-recommends $packages
fi

echo "install-exporter: installing $exporter and $generator into $dir" >&2
GOBIN="$dir" ${GO:-go} install "$exporter"
GOBIN="$dir" CGO_ENABLED=1 ${GO:-go} install "$generator"
echo "$version" >"$stamp"
