#!/bin/sh
# Build GenMC 0.9 (the model checker of the `genmc` CTest label) once and
# cache it in DIR (default: /var/cache/topsync-genmc), as numa-vm-kernel.sh
# caches the guest kernel. Prints the path of the genmc binary. The source is
# the tarball in ../shared/tools/genmc/ (or TOPSYNC_GENMC_TARBALL); GenMC is a
# test tool, GPL v3, and nothing of it goes into topsync. Needs llvm-14-dev,
# clang-14, libclang-14-dev, autoconf, automake, libtool, libffi-dev and
# zlib1g-dev (scripts/setup-debian.sh installs them unless
# TOPSYNC_SETUP_GENMC=0). About 15 minutes on 2 cores, the first time only.
set -eu
dir=${1:-/var/cache/topsync-genmc}
here=$(cd "$(dirname "$0")" && pwd)
tarball=${TOPSYNC_GENMC_TARBALL:-}
for t in "$here/../../shared/tools/genmc/genmc-v0.9.tar.gz" /work/shared/tools/genmc/genmc-v0.9.tar.gz; do
    [ -n "$tarball" ] || [ ! -r "$t" ] || tarball=$t
done
if [ -x "$dir/src/genmc" ]; then
    echo "$dir/src/genmc"
    exit 0
fi
[ -n "$tarball" ] && [ -r "$tarball" ] || { echo "genmc-build: no GenMC source at $tarball (set TOPSYNC_GENMC_TARBALL)" >&2; exit 1; }
mkdir -p "$dir"
log="$dir/build.log"
{
    tar xzf "$tarball" -C "$dir" &&
    cd "$dir" &&
    autoreconf --install &&
    ./configure --with-llvm=/usr/lib/llvm-14 &&
    make -j"$(nproc)"
} >"$log" 2>&1 || { tail -n 30 "$log" >&2; echo "genmc-build: failed, log in $log" >&2; exit 1; }
[ -x "$dir/src/genmc" ] || { echo "genmc-build: built, but no $dir/src/genmc" >&2; exit 1; }
echo "$dir/src/genmc"
