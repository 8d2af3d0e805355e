# Sourced by the MPI measurement scripts (mpi_oversub.sh, mpi_path_cost.sh):
# how an MPI of the test matrix is named, found and compiled for. An mpi is
# openmpi or mpich (Debian's) or one of scripts/setup-mpis.sh's: openmpi5,
# mpich5, impi, mpich5-abi (under $matrix, which the caller sets).

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
# the median of the numbers on stdin, one a line
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
