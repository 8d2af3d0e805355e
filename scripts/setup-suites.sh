#!/usr/bin/env bash
# Third-party test suites that the tests run against topsync (../shared/
# SUITES.md): MPICH 4.0.2's test/mpi, from Debian's source package of
# mpich (a deb-src entry is added for it), unpacked into
# ${TOPSYNC_SUITES:-/var/cache/topsync-suites}/mpich-4.0.2/test/mpi.
# Idempotent: a second run costs nothing. Run as root.
#
# mpi4py 4.1.2's own test suite, from its source distribution on the Python
# package index (pip download, with the pip of an MPI of the matrix,
# scripts/setup-mpis.sh, run first), into $dir/mpi4py-4.1.2/test.
set -euo pipefail
dir=${TOPSYNC_SUITES:-/var/cache/topsync-suites}
mkdir -p "$dir"
cd "$dir"
if [ -f mpi4py-4.1.2/test/runtests.py ]; then
    echo "setup-suites: mpi4py 4.1.2 test suite present in $dir"
else
    py=$(ls "${TOPSYNC_MPI_MATRIX_DIR:-/var/cache/topsync-mpis}"/*/bin/python 2>/dev/null | head -1 || true)
    if [ -n "$py" ] && "$py" -m pip download -q --no-deps --no-binary :all: mpi4py==4.1.2 -d "$dir" &&
        tar xzf mpi4py-4.1.2.tar.gz mpi4py-4.1.2/test; then
        echo "setup-suites: mpi4py 4.1.2 test suite in $dir/mpi4py-4.1.2/test"
    else
        echo "setup-suites: no mpi4py 4.1.2 test suite (no matrix MPI's pip, or the download failed)" >&2
    fi
fi
if [ -f "$dir/mpich-4.0.2/test/mpi/coll/testlist.in" ]; then
    echo "setup-suites: MPICH 4.0.2 test suite present in $dir"
    exit 0
fi
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
