#!/usr/bin/env bash
# Programs that need MPI's progress inside MPI_Barrier (issue 35 item 3,
# docs/results.md): tests/mpi/progress_check.c's three patterns (a 1 MiB
# rendezvous Irecv across the barrier; an 8 MiB one across a broadcast and
# an allreduce, issue 56 item 2; Fetch_and_op + Win_flush to rank 0
# before it), for each MPI natively and with libtopsync-mpi preloaded,
# RUNS interleaved pairs of jobs. A Markdown table on stdout: the medians
# (us per iteration) and preloaded / native.
#
#   usage: scripts/mpi_progress.sh [BUILD_DIR]
#   environment: MPIS (default: openmpi mpich openmpi5 mpich5 impi
#   mpich5-abi; those missing are skipped, saying so), NP (default 2),
#   BIND (core | none, default core), RUNS (default 5), ITERS (iterations
#   per job, default 300); PATTERNS (default: irecv bcast-irecv rma);
#   LIB_DIR: where the libtopsync-mpi-*.so are.
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(readlink -f "${1:-build}")
mpis=${MPIS:-openmpi mpich openmpi5 mpich5 impi mpich5-abi}
np=${NP:-2} bind=${BIND:-core} runs=${RUNS:-5} iters=${ITERS:-300}
case $bind in core | none) ;; *) echo "mpi_progress: BIND=$bind: valid: core, none" >&2; exit 2 ;; esac
libdir=$(readlink -f "${LIB_DIR:-$build/mpi}")
. scripts/mpi_matrix.sh # the OMPI_* settings, $matrix, mpi_usable, launcher_of, median
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "| MPI | pattern | np, binding | native us/iter | preloaded us/iter | preloaded / native |"
echo "|---|---|---|---:|---:|---:|"
for mpi in $mpis; do
    mpi_usable mpi_progress "$mpi" || continue
    I_MPI_ROOT=$prefix "$cc" -O2 -o "$tmp/progress-$mpi" tests/mpi/progress_check.c
    for pattern in ${PATTERNS:-irecv bcast-irecv rma}; do
        : >"$tmp/native" && : >"$tmp/preloaded"
        for k in $(seq "$runs"); do
            for how in native preloaded; do
                if [ "$how" = preloaded ]; then
                    launcher_of "$mpi" "$np" "$bind" "LD_PRELOAD=$(readlink -f "$lib")"
                else
                    launcher_of "$mpi" "$np" "$bind"
                fi
                out=$(I_MPI_ROOT=$prefix timeout 600 "${launcher[@]}" \
                    "$tmp/progress-$mpi" "$pattern" "$iters" 2>&1) || {
                    echo "mpi_progress: $mpi $pattern $how failed: $out" >&2
                    exit 1
                }
                grep -qE '^[0-9]+ passed, 0 failed$' <<<"$out" || {
                    echo "mpi_progress: $mpi $pattern $how: wrong results: $out" >&2
                    exit 1
                }
                awk -v p="$pattern" '$1 == p {print $2}' <<<"$out" >>"$tmp/$how"
            done
        done
        n=$(median <"$tmp/native") p=$(median <"$tmp/preloaded")
        ratio=$(awk -v n="$n" -v p="$p" 'BEGIN {printf "%.2f", (n > 0 ? p / n : 0)}')
        echo "| $mpi | $pattern | $np, $bind | $n | $p | $ratio |"
    done
done
