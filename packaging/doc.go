// Package packaging holds what installs the daemon like any Linux service
// (the systemd unit, the snmpd drop-in, the sysusers.d entry, pkg-config
// templates, the Debian control files and build-deb.sh, all used by the
// Makefile's install, uninstall and deb targets) and the tests that prove
// the installed tree: its layout and modes, the unit, the man pages, the
// package, and the installed binary serving through a real snmpd with the
// installed drop-in. See docs/INSTALL.md.
package packaging
