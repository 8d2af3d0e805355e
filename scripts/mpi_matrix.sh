# Sourced by the MPI measurement scripts (coll_compare.sh, md_compare.sh,
# mpi_oversub.sh, mpi_path_cost.sh, mpi_progress.sh, mpi_setup_cost.sh,
# nwchem_compare.sh): how an MPI of the test matrix is named, found,
# compiled for and launched. An mpi is openmpi or mpich (Debian's) or one
# of scripts/setup-mpis.sh's: openmpi5, mpich5, impi, mpich5-abi (under
# $matrix: TOPSYNC_MPI_MATRIX_DIR, /var/cache/topsync-mpis by default).

# Open MPI run as root, over shared memory, with more ranks than CPUs
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
export OMPI_MCA_rmaps_base_oversubscribe=1
matrix=${TOPSYNC_MPI_MATRIX_DIR:-/var/cache/topsync-mpis}

# the ABI, i.e. which libtopsync-mpi-*.so serves it
abi_of() { case $1 in openmpi | openmpi5) echo openmpi ;; *-abi) echo abi ;; *) echo mpich ;; esac; }
# its install prefix ("" for Debian's)
prefix_of() { case $1 in openmpi | mpich) echo "" ;; *) echo "$matrix/${1%-abi}" ;; esac; }
# its compiler wrapper
cc_of() {
    local prefix
    prefix=$(prefix_of "$1")
    if [ -z "$prefix" ]; then
        echo "mpicc.$1"
    elif [ "$(abi_of "$1")" = abi ]; then
        echo "$prefix/bin/mpicc_abi"
    else
        echo "$prefix/bin/mpicc"
    fi
}
# launcher_of MPI NP BIND [VAR=VALUE ...]: sets the array `launcher` to the
# MPI's own launcher running NP ranks bound to BIND (core | none), with each
# VAR=VALUE set in every rank (Open MPI's -x, MPICH's -genv); the matrix's
# Open MPI 5 with its shared-memory BTL and without its UCX one-sided
# component, which only warns here
launcher_of() {
    local mpi=$1 np=$2 bind=$3 prefix e
    shift 3
    prefix=$(prefix_of "$mpi")
    if [ "$(abi_of "$mpi")" = openmpi ]; then
        launcher=(mpirun.openmpi -np "$np" --bind-to "$bind")
        [ -n "$prefix" ] &&
            launcher=(env OMPI_MCA_btl=self,sm OMPI_MCA_osc=^ucx "$prefix/bin/mpirun" -np "$np" --bind-to "$bind")
        for e; do launcher+=(-x "$e"); done
    else
        launcher=(mpiexec.mpich -n "$np" -bind-to "$bind")
        [ -n "$prefix" ] && launcher[0]=$prefix/bin/mpiexec
        for e; do launcher+=(-genv "${e%%=*}" "${e#*=}"); done
    fi
}
# the median of the numbers on stdin, one a line
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
# mpi_usable SCRIPT MPI: sets impl, prefix, cc and lib (the
# libtopsync-mpi serving MPI, under $libdir) and succeeds; or says on stderr,
# as SCRIPT, why MPI is skipped (no compiler wrapper, no library) and fails
mpi_usable() {
    impl=$(abi_of "$2") prefix=$(prefix_of "$2") cc=$(cc_of "$2")
    lib=$libdir/libtopsync-mpi-$impl.so
    if ! command -v "$cc" >/dev/null || [ ! -e "$lib" ]; then
        echo "$1: $2 skipped: no $cc or no $lib (scripts/setup-mpis.sh)" >&2
        return 1
    fi
}
