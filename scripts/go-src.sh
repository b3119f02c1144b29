# Sourced by install-go-tools.sh and install-exporter.sh: go_src MODULE
# VERSION prints the directory of MODULE@VERSION's source in the module
# cache, downloading it (checked against the checksum database) when
# missing. Such tools are built in place, with their own go.mod and go.sum,
# rather than by `go install module@version`, which also asks the proxy for
# the module's version list (to report deprecation): that may be refused,
# and with GOPROXY=off (a build from the module cache alone, as in
# scripts/stock-host.sh) it always is.
go_src() {
	src=$(cd "${TMPDIR:-/tmp}" && GO111MODULE=on ${GO:-go} mod download -json "$1@$2" |
		sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	if [ -z "$src" ] || [ ! -f "$src/go.mod" ]; then
		echo "go_src: go mod download $1@$2 gave no source directory" >&2
		return 1
	fi
	echo "$src"
}
