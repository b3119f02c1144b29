# Sourced by the install-*.sh scripts: installing Debian packages the one
# way they all do it. apt_install NAME PACKAGES... installs them with
# apt-get as root on Debian/Ubuntu; elsewhere it prints the command to run
# and fails, naming the script that needed them.
apt_install() {
	name=$1
	shift
	if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
		echo "$name: as root on Debian/Ubuntu, run:" >&2
		echo "  apt-get update && apt-get install -y --no-install-recommends $*" >&2
		exit 1
	fi
	DEBIAN_FRONTEND=noninteractive apt-get update -q
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@"
}
