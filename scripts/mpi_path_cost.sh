#!/usr/bin/env bash
# The cost of the MPI path itself (issue 24 item 6, docs/results.md): for
# each MPI, scripts/mpi_path_cost.c under libtopsync-mpi preloaded, np
# ranks bound to cores, RUNS jobs; each job alternates blocks of
# MPI_Barrier with blocks of the bare topsync barrier (same algorithm,
# same ranks) and prints the medians. A Markdown table on stdout: the
# medians over the jobs of MPI_Barrier, the bare barrier and their
# difference (ns).
#
#   usage: scripts/mpi_path_cost.sh [BUILD_DIR]
#   environment: MPIS (default: openmpi mpich openmpi5 mpich5 impi
#   mpich5-abi; those of scripts/setup-mpis.sh that are missing are
#   skipped, saying so), NP (default 2), RUNS (default 5), ITERS
#   (barriers per block, default 100000), ROUNDS (blocks of each per job,
#   default 7); LIB_DIR: where the libtopsync-mpi-*.so are.
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(readlink -f "${1:-build}")
mpis=${MPIS:-openmpi mpich openmpi5 mpich5 impi mpich5-abi}
np=${NP:-2} runs=${RUNS:-5} iters=${ITERS:-100000} rounds=${ROUNDS:-7}
libdir=$(readlink -f "${LIB_DIR:-$build/mpi}")
. scripts/mpi_matrix.sh # the OMPI_* settings, $matrix, mpi_usable, launcher_of, median
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "| MPI | algorithm | MPI_Barrier ns | bare barrier ns | difference ns (range) |"
echo "|---|---|---:|---:|---|"
for mpi in $mpis; do
    mpi_usable mpi_path_cost "$mpi" || continue
    I_MPI_ROOT=$prefix "$cc" -O2 -Iinclude $(pkg-config --cflags hwloc) -o "$tmp/cost-$mpi" \
        scripts/mpi_path_cost.c -L"$build" -ltopsync -Wl,-rpath,"$build" -lhwloc -ldl
    launcher_of "$mpi" "$np" core "LD_PRELOAD=$(readlink -f "$lib")"
    : >"$tmp/$mpi"
    for k in $(seq "$runs"); do
        timeout 300 "${launcher[@]}" "$tmp/cost-$mpi" "$iters" "$rounds" >>"$tmp/$mpi"
    done
    algorithm=$(awk 'NR == 1 {print $1}' "$tmp/$mpi")
    m=$(awk '{print $2}' "$tmp/$mpi" | median)
    b=$(awk '{print $3}' "$tmp/$mpi" | median)
    d=$(awk '{print $4}' "$tmp/$mpi" | median)
    range=$(awk '{print $4}' "$tmp/$mpi" | sort -g | awk 'NR == 1 {lo = $1} {hi = $1} END {print lo " to " hi}')
    echo "| $mpi | $algorithm | $m | $b | $d ($range) |"
done
