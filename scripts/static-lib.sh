#!/bin/sh
# static-lib.sh OUT.a OBJECT... builds a C library's static archive that
# defines only its public names, as its shared library does: the objects
# are linked into one (cc -r), whose hidden names (the sources' internal
# headers push visibility hidden) become local (objcopy --localize-hidden).
# A program with its own json_parse or ar_log then links with the archive.
# The Makefile and the Go tests' builds both use it.
set -eu
out=$1
shift
one="${out%.a}.o"
${CC:-cc} -r -nostdlib -o "$one" "$@"
${OBJCOPY:-objcopy} --localize-hidden "$one"
rm -f "$out"
${AR:-ar} rcs "$out" "$one"
rm -f "$one"
