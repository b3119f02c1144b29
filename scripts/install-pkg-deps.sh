#!/bin/sh
# Installs what the packaging tests (packaging/) run: dpkg-deb and
# dpkg-architecture (dpkg-dev), lintian, systemd-analyze (systemd), man and
# its renderer (man-db, groff-base), pkg-config. Quiet and successful when
# everything is already there; as root on Debian it installs the missing
# packages, otherwise it prints the command and fails. Installing the
# systemd package starts nothing: the tests only verify the unit.
set -eu

packages="dpkg-dev lintian systemd man-db groff-base pkg-config"

missing=""
check() {
	if ! command -v "$1" >/dev/null 2>&1; then
		missing="$missing $1($2)"
	fi
}
check_all() {
	missing=""
	check dpkg-deb dpkg
	check dpkg-architecture dpkg-dev
	check lintian lintian
	check systemd-analyze systemd
	check man man-db
	check groff groff-base
	check pkg-config pkg-config
}

check_all
[ -z "$missing" ] && exit 0

echo "install-pkg-deps: missing:$missing" >&2
. "$(dirname "$0")/apt-lib.sh"
apt_install install-pkg-deps $packages

check_all
if [ -n "$missing" ]; then
	echo "install-pkg-deps: still missing after install:$missing" >&2
	exit 1
fi
echo "install-pkg-deps: installed $packages" >&2
