#!/usr/bin/env bash
# Third-party test suites that the tests run against topsync (../shared/
# SUITES.md): MPICH 4.0.2's test/mpi, from Debian's source package of
# mpich (a deb-src entry is added for it), unpacked into
# ${TOPSYNC_SUITES:-/var/cache/topsync-suites}/mpich-4.0.2/test/mpi.
# Idempotent: a second run costs nothing. Run as root.
set -euo pipefail
dir=${TOPSYNC_SUITES:-/var/cache/topsync-suites}
if [ -f "$dir/mpich-4.0.2/test/mpi/coll/testlist.in" ]; then
    echo "setup-suites: MPICH 4.0.2 test suite present in $dir"
    exit 0
fi
mkdir -p "$dir"
cd "$dir"
if ! ls mpich_4.0.2.orig.tar.* >/dev/null 2>&1; then
    src=/etc/apt/sources.list.d/debian-src.sources
    if [ ! -f "$src" ] && [ -f /etc/apt/sources.list.d/debian.sources ]; then
        sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources >"$src"
        apt-get update -qq
    fi
    apt-get source --download-only -qq mpich=4.0.2-3 >/dev/null 2>&1 ||
        apt-get source --download-only -qq mpich >/dev/null
fi
tar xf mpich_4.0.2.orig.tar.* mpich-4.0.2/test/mpi
echo "setup-suites: MPICH 4.0.2 test suite in $dir/mpich-4.0.2/test/mpi"
