#!/bin/sh
# Installs the Go tools `make test` runs into a project-local directory
# (default bin/tools), so nothing is assumed on PATH. Quiet and quick when
# the pinned version is already there.
set -eu

dir=${1:-bin/tools}
# 2026.2.2 is the newest release and supports Go 1.26 (2025.1 is the oldest
# that does).
module=honnef.co/go/tools
version=v0.8.2
want="(0.8.2)"

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
if [ -x "$dir/staticcheck" ] && "$dir/staticcheck" -version 2>/dev/null | grep -qF "$want"; then
	exit 0
fi
echo "install-go-tools: installing staticcheck ($module@$version) into $dir" >&2
# Built in place from the pinned version's source (scripts/go-src.sh says why).
. "$(dirname "$0")/go-src.sh"
src=$(go_src "$module" "$version")
(cd "$src" && ${GO:-go} build -trimpath -o "$dir/staticcheck" ./cmd/staticcheck)
