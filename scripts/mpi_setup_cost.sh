#!/usr/bin/env bash
# A new communicator's set-up (issue 35 item 4, docs/results.md "A
# duplicate's set-up"): bench/mpi_comm_setup.c for each MPI natively and
# with libtopsync-mpi preloaded (and, with PREV_LIB_DIR, a previous build's
# libtopsync-mpi too), RUNS interleaved jobs each. A Markdown table on
# stdout: the medians of the first barrier (the MPI's own, deferred set-up
# aside), of the set-up barrier (the communicator's second MPI_Barrier) and
# of the whole cycle (make, 3 barriers, free), in us.
#
#   usage: scripts/mpi_setup_cost.sh [BUILD_DIR]
#   environment: MPIS (default: openmpi mpich; those missing are skipped,
#   saying so), KINDS (default: dup split halves), NP (default 4), BIND
#   (core | none, default none), RUNS (default 5), ITERS (communicators per
#   job, default 200); LIB_DIR: where the libtopsync-mpi-*.so are;
#   PREV_LIB_DIR: another build's, measured beside.
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(readlink -f "${1:-build}")
mpis=${MPIS:-openmpi mpich} kinds=${KINDS:-dup split halves}
np=${NP:-4} bind=${BIND:-none} runs=${RUNS:-5} iters=${ITERS:-200}
case $bind in core | none) ;; *) echo "mpi_setup_cost: BIND=$bind: valid: core, none" >&2; exit 2 ;; esac
for k in $kinds; do
    case $k in dup | split | halves) ;; *) echo "mpi_setup_cost: KINDS: '$k': valid: dup, split, halves" >&2; exit 2 ;; esac
done
libdir=$(readlink -f "${LIB_DIR:-$build/mpi}")
prev=${PREV_LIB_DIR:+$(readlink -f "$PREV_LIB_DIR")}
. scripts/mpi_matrix.sh # the OMPI_* settings, $matrix, mpi_usable, launcher_of, median
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

hows="native preloaded${prev:+ previous}"
echo "| MPI | kind | np, binding | how | first barrier us | set-up barrier us | cycle us |"
echo "|---|---|---|---|---:|---:|---:|"
for mpi in $mpis; do
    mpi_usable mpi_setup_cost "$mpi" || continue
    I_MPI_ROOT=$prefix "$cc" -O2 -o "$tmp/setup-$mpi" bench/mpi_comm_setup.c
    for kind in $kinds; do
        for how in $hows; do : >"$tmp/$how.first" && : >"$tmp/$how.setup" && : >"$tmp/$how.cycle"; done
        for k in $(seq "$runs"); do
            for how in $hows; do
                case $how in
                native) launcher_of "$mpi" "$np" "$bind" ;;
                preloaded) launcher_of "$mpi" "$np" "$bind" "LD_PRELOAD=$lib" ;;
                previous) launcher_of "$mpi" "$np" "$bind" "LD_PRELOAD=$prev/libtopsync-mpi-$impl.so" ;;
                esac
                out=$(I_MPI_ROOT=$prefix timeout 600 "${launcher[@]}" \
                    "$tmp/setup-$mpi" "$kind" "$iters" 2>&1) || {
                    echo "mpi_setup_cost: $mpi $kind $how failed: $out" >&2
                    exit 1
                }
                line=$(grep "^$kind setup_us " <<<"$out") || {
                    echo "mpi_setup_cost: $mpi $kind $how: no result: $out" >&2
                    exit 1
                }
                awk '{print $3}' <<<"$line" >>"$tmp/$how.setup"
                awk '{print $5}' <<<"$line" >>"$tmp/$how.cycle"
                awk '{print $7}' <<<"$line" >>"$tmp/$how.first"
            done
        done
        for how in $hows; do
            echo "| $mpi | $kind | $np, $bind | $how | $(median <"$tmp/$how.first") | $(median <"$tmp/$how.setup") | $(median <"$tmp/$how.cycle") |"
        done
    done
done
