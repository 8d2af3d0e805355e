#!/usr/bin/env bash
# Third-party test suites that the tests run against topsync (../shared/
# SUITES.md): MPICH 4.0.2's test/mpi, from Debian's source package of
# mpich (a deb-src entry is added for it), unpacked into
# ${TOPSYNC_SUITES:-/var/cache/topsync-suites}/mpich-4.0.2/test/mpi.
# Idempotent: a second run costs nothing. Run as root.
#
# glibc 2.36's pthread_barrier tests, from its source package, into
# $dir/glibc-2.36/sysdeps/pthread (four files).
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
# Debian's source packages need a deb-src entry (added once)
deb_src() {
    local src=/etc/apt/sources.list.d/debian-src.sources
    if [ ! -f "$src" ] && [ -f /etc/apt/sources.list.d/debian.sources ]; then
        sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources >"$src"
        apt-get update -qq
    fi
}
# glibc 2.36's pthread_barrier tests (sysdeps/pthread/tst-barrier1..4),
# from its source package (19 MB, kept only for these four files)
if [ -f "$dir/glibc-2.36/sysdeps/pthread/tst-barrier4.c" ]; then
    echo "setup-suites: glibc 2.36 barrier tests present in $dir"
else
    deb_src
    tmp=$(mktemp -d)
    chmod 755 "$tmp" # apt's _apt user downloads into it
    if (cd "$tmp" && apt-get source --download-only -qq glibc >/dev/null 2>&1) &&
        tar xf "$tmp"/glibc_2.36.orig.tar.* --wildcards 'glibc-2.36/sysdeps/pthread/tst-barrier[1-4].c'; then
        echo "setup-suites: glibc 2.36 barrier tests in $dir/glibc-2.36/sysdeps/pthread"
    else
        echo "setup-suites: no glibc 2.36 barrier tests (the source package could not be had)" >&2
    fi
    rm -rf "$tmp"
fi
if [ -f "$dir/mpich-4.0.2/test/mpi/coll/testlist.in" ]; then
    echo "setup-suites: MPICH 4.0.2 test suite present in $dir"
    exit 0
fi
if ! ls mpich_4.0.2.orig.tar.* >/dev/null 2>&1; then
    deb_src
    apt-get source --download-only -qq mpich=4.0.2-3 >/dev/null 2>&1 ||
        apt-get source --download-only -qq mpich >/dev/null
fi
tar xf mpich_4.0.2.orig.tar.* mpich-4.0.2/test/mpi
echo "setup-suites: MPICH 4.0.2 test suite in $dir/mpich-4.0.2/test/mpi"
