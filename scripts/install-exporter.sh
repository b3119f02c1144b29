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
module=github.com/prometheus/snmp_exporter

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
stamp="$dir/.snmp_exporter-version"
installed() {
	[ -x "$dir/snmp_exporter" ] && [ -x "$dir/generator" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$version" ]
}
installed && exit 0
# Test packages run in parallel and may both call this: one builds.
if command -v flock >/dev/null 2>&1; then
	exec 9>"$dir/.install-exporter.lock"
	flock 9
	installed && exit 0
fi

# The generator's cgo build needs net-snmp's headers and library.
if [ ! -f /usr/include/net-snmp/net-snmp-config.h ] || ! command -v cc >/dev/null 2>&1; then
	echo "install-exporter: the generator needs net-snmp's headers and a C compiler" >&2
	. "$(dirname "$0")/apt-lib.sh"
	apt_install install-exporter libsnmp-dev gcc libc6-dev
fi

echo "install-exporter: building snmp_exporter and its generator $version into $dir" >&2
# Built in place from the pinned version's source (scripts/go-src.sh says why).
. "$(dirname "$0")/go-src.sh"
src=$(go_src "$module" "$version")
ldflags="-X github.com/prometheus/common/version.Version=${version#v}"
(cd "$src" && ${GO:-go} build -trimpath -ldflags "$ldflags" -o "$dir/snmp_exporter" .)
(cd "$src" && CGO_ENABLED=1 ${GO:-go} build -trimpath -ldflags "$ldflags" -o "$dir/generator" ./generator)
echo "$version" >"$stamp"
