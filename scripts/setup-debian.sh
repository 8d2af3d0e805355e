#!/usr/bin/env bash
# Install what topsync needs on Debian (12 or later). Idempotent; uses sudo
# when not run as root. Set TOPSYNC_SETUP_MPI=0 to skip the MPI libraries,
# TOPSYNC_SETUP_NUMA_VM=0 to skip qemu, busybox and the guest kernel of the
# numa-vm test, TOPSYNC_SETUP_GENMC=0 to skip building the model checker of
# the genmc test label (GenMC 0.9, about 3 minutes the first time, cached
# in /var/cache/topsync-genmc), TOPSYNC_SETUP_MPI_MATRIX=0 to skip the MPIs
# from the Python package index (Open MPI 5, MPICH 5, Intel MPI, each with
# mpi4py: scripts/setup-mpis.sh, about 150 MB in /var/cache/topsync-mpis),
# TOPSYNC_SETUP_APPS=0 to skip the real applications of the apps label
# (Debian's NWChem builds for MPICH and Open MPI, LAMMPS and GROMACS),
# TOPSYNC_SETUP_SUITES=0 to skip fetching MPICH's test suite (Debian's source
# package of mpich, 22 MB, cached in /var/cache/topsync-suites).
set -euo pipefail
packages=(build-essential cmake ninja-build pkg-config libhwloc-dev hwloc libck-dev python3
          python3-matplotlib spin clang libclang-rt-14-dev clang-format-14 groff-base m4 xz-utils)
if [ "${TOPSYNC_SETUP_MPI:-1}" != 0 ]; then
    packages+=(libopenmpi-dev openmpi-bin libmpich-dev mpich gfortran)
    if [ "${TOPSYNC_SETUP_MPI_MATRIX:-1}" != 0 ]; then
        packages+=(python3-venv libfabric1)
    fi
fi
if [ "${TOPSYNC_SETUP_MPI:-1}" != 0 ] && [ "${TOPSYNC_SETUP_APPS:-1}" != 0 ]; then
    # the apps label's real applications (tests/mpi: NWChem natively and
    # preloaded, about 190 MB)
    packages+=(nwchem-mpich nwchem-openmpi lammps gromacs)
fi
if [ "${TOPSYNC_SETUP_NUMA_VM:-1}" != 0 ]; then
    packages+=(qemu-system-x86 busybox-static cpio file)
fi
if [ "${TOPSYNC_SETUP_GENMC:-1}" != 0 ]; then
    packages+=(llvm-14-dev clang-14 libclang-14-dev autoconf automake libtool libffi-dev zlib1g-dev)
fi
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
if [ ${#missing[@]} -eq 0 ]; then
    echo "setup: all packages present"
else
    echo "setup: installing ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if [ "${TOPSYNC_SETUP_NUMA_VM:-1}" != 0 ]; then
    # the guest kernel of tests/numa-vm, cached in /var/cache/topsync-numa-vm
    $sudo "$(dirname "$0")/numa-vm-kernel.sh" >/dev/null
fi
if [ "${TOPSYNC_SETUP_GENMC:-1}" != 0 ]; then
    # GenMC, built once from ../shared/tools/genmc and cached; without its
    # source the genmc label cannot run, which scripts/test.sh reports
    $sudo "$(dirname "$0")/genmc-build.sh" >/dev/null ||
        echo "setup: WARNING: GenMC not built (see above): the genmc tests will not run" >&2
fi
if [ "${TOPSYNC_SETUP_MPI:-1}" != 0 ] && [ "${TOPSYNC_SETUP_MPI_MATRIX:-1}" != 0 ]; then
    # without the package index the matrix's tests skip, each naming its MPI
    $sudo "$(dirname "$0")/setup-mpis.sh" ||
        echo "setup: WARNING: not every MPI of the test matrix was installed (see above)" >&2
fi
if [ "${TOPSYNC_SETUP_MPI:-1}" != 0 ] && [ "${TOPSYNC_SETUP_SUITES:-1}" != 0 ]; then
    # MPICH 4.0.2's own test suite (test/mpi: the mpi.*.mpich-coll-suite
    # tests), from Debian's source package, cached in /var/cache/topsync-suites
    $sudo "$(dirname "$0")/setup-suites.sh" ||
        echo "setup: WARNING: MPICH's test suite not fetched (see above): its tests skip" >&2
fi
