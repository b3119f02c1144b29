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
# `go install module@version` also asks the proxy for the module's version
# list (to report deprecation), which may be refused; so download the pinned
# version's source (checked against the checksum database) and build it in
# place, with its own go.mod and go.sum.
src=$(cd "${TMPDIR:-/tmp}" && GO111MODULE=on ${GO:-go} mod download -json "$module@$version" |
	sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
if [ -z "$src" ] || [ ! -f "$src/go.mod" ]; then
	echo "install-exporter: go mod download $module@$version gave no source directory" >&2
	exit 1
fi
ldflags="-X github.com/prometheus/common/version.Version=${version#v}"
(cd "$src" && ${GO:-go} build -trimpath -ldflags "$ldflags" -o "$dir/snmp_exporter" .)
(cd "$src" && CGO_ENABLED=1 ${GO:-go} build -trimpath -ldflags "$ldflags" -o "$dir/generator" ./generator)
echo "$version" >"$stamp"
