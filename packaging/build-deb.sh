#!/bin/sh
# Turns a staged install (make install DESTDIR=STAGE PREFIX=/usr) into
# OUTDIR/subagent_VERSION-REVISION_ARCH.deb with dpkg-deb: control files
# from packaging/debian, stripped binaries, copyright and changelog. Run by
# `make deb`, which sets VERSION, DEB_REVISION, SOVERSION, DEB_MAINTAINER.
set -eu

stage=$1
outdir=$2
here=$(dirname "$0")/debian
: "${VERSION:?}" "${DEB_REVISION:?}" "${SOVERSION:?}" "${DEB_MAINTAINER:?}"
for tool in dpkg-deb dpkg-architecture; do
	command -v "$tool" >/dev/null 2>&1 || {
		echo "build-deb: $tool is missing; run scripts/install-pkg-deps.sh (as root)" >&2
		exit 1
	}
done

debversion=$VERSION-$DEB_REVISION
arch=$(dpkg --print-architecture)
doc=$stage/usr/share/doc/subagent
date=$(date -u -R -d "@${SOURCE_DATE_EPOCH:-$(date +%s)}")
# quote VALUE: VALUE safe on the right of sed's s|...|...|.
quote() { printf '%s' "$1" | sed 's/[|&\\]/\\&/g'; }
subst() {
	sed -e "s|@DEBVERSION@|$(quote "$debversion")|g" -e "s|@ARCH@|$(quote "$arch")|g" \
		-e "s|@MAINTAINER@|$(quote "$DEB_MAINTAINER")|g" -e "s|@SOVERSION@|$(quote "$SOVERSION")|g" \
		-e "s|@DATE@|$(quote "$date")|g" "$@"
}

# What dh_strip does: no debugging sections in what is shipped.
for f in "$stage"/usr/lib/*/lib*.so.*.*; do
	strip --strip-unneeded --remove-section=.comment --remove-section=.note "$f"
done
for f in "$stage"/usr/lib/*/lib*.a; do
	strip --strip-debug --remove-section=.comment --remove-section=.note --enable-deterministic-archives "$f"
done

install -d -m 0755 "$doc" "$stage/usr/share/lintian/overrides"
install -m 0644 "$here/lintian-overrides" "$stage/usr/share/lintian/overrides/subagent"
subst "$here/copyright" > "$doc/copyright"
subst "$here/changelog.in" | gzip -9n > "$doc/changelog.Debian.gz"
chmod 0644 "$doc/copyright" "$doc/changelog.Debian.gz"

# Depends: what dpkg-shlibdeps finds for the ELF files (libc6), as
# ${shlibs:Depends} would be; it wants a debian/control beside it.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/debian"
printf 'Source: subagent\n\nPackage: subagent\nArchitecture: any\n' > "$work/debian/control"
# Matched below the stage (whose own path may hold a bin/, as make deb's
# bin/deb/root does): the executables and shared libraries alone, for
# dpkg-shlibdeps warns about every other file, and about files outside a
# package tree (a directory with DEBIAN).
install -d -m 0755 "$stage/DEBIAN"
root=$(cd "$stage" && pwd)
elfs=
for f in $(cd "$root" && find usr -type f \( -path 'usr/bin/*' -o -name '*.so.*' \)); do
	elfs="$elfs $root/$f"
done
depends=$(cd "$work" && dpkg-shlibdeps -O -xsubagent $elfs | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || { echo "build-deb: dpkg-shlibdeps found no dependencies" >&2; exit 1; }
# postinst makes the system user with adduser where systemd-sysusers is
# missing.
depends="$depends, adduser | systemd"

size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
subst "$here/control.in" | sed -e "s|@SIZE@|$size|" -e "s|@DEPENDS@|$(quote "$depends")|" > "$stage/DEBIAN/control"
subst "$here/shlibs.in" > "$stage/DEBIAN/shlibs"
install -m 0644 "$here/conffiles" "$here/triggers" "$stage/DEBIAN/"
install -m 0755 "$here/postinst" "$here/prerm" "$here/postrm" "$stage/DEBIAN/"
chmod 0644 "$stage/DEBIAN/control" "$stage/DEBIAN/shlibs"
(cd "$stage" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z | xargs -0 md5sum) > "$stage/DEBIAN/md5sums"
chmod 0644 "$stage/DEBIAN/md5sums"

out=$outdir/subagent_${debversion}_$arch.deb
dpkg-deb --root-owner-group -Zxz --build "$stage" "$out"
echo "build-deb: $out"
