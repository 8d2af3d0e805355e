#!/usr/bin/env bash
# The thread and process barrier where users run it (issues 35 and 53):
# topsync's default (auto) against glibc's pthread_barrier and libgomp's
# barrier in the same command, and the pthread drop-in against glibc in an
# unmodified program, at P participants bound to cores on an idle machine
# and unbound beside 0, P/4, P and 2P busy neighbour processes
# (topsync-bench --noise); forked processes against glibc's process-shared
# barrier alike. Each condition runs twice, alternating, with reactive
# barriers on (the default) and off (TOPSYNC_REACTIVE=off: auto's first
# choice kept), so that what reacting changes is seen beside glibc's run of
# the same command; and MPI_Barrier preloaded against each Debian MPI's own
# at np 4 and 8 unbound beside as many busy processes (scripts/
# mpi_oversub.sh). Every timed run lasts at least RUN_MS (many scheduler
# slices); a figure is the median over RUNS runs, and a ratio to glibc the
# median of the runs' ratios to glibc's run of the same round. A Markdown
# table on stdout.
#
#   usage: scripts/conditions.sh [BUILD_DIR]
#   environment: THREADS (default "2 4 8 16"), NOISE ("0 P/4 P 2P" in
#   units of P; default all four), RUNS (default 5), RUN_MS (default 250),
#   ITERS (the least iterations per run, default 2000), KINDS (default
#   "threads processes"), JSON_DIR (keep each command's JSON there, for
#   scripts/conditions_report.py --plot; default: a temporary directory),
#   MPI_NP (default "4 8"; empty: no MPI rows)
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(readlink -f "${1:-build}")
bench=$build/bench/topsync-bench
threads=${THREADS:-2 4 8 16} runs=${RUNS:-5} run_ms=${RUN_MS:-250} iters=${ITERS:-2000}
levels=${NOISE:-0 P/4 P 2P} kinds=${KINDS:-threads processes}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
json_dir=${JSON_DIR:-$tmp}
mkdir -p "$json_dir"
noise_of() { # $1 level, $2 P
    case $1 in
    0) echo 0 ;; P/4) echo $((($2 + 3) / 4)) ;; P) echo "$2" ;; 2P) echo $((2 * $2)) ;;
    *) echo "conditions.sh: NOISE takes 0, P/4, P, 2P, not '$1'" >&2; exit 2 ;;
    esac
}
for n in $threads; do
    for kind in $kinds; do
        peers=pthread,omp,program
        [ "$kind" = processes ] && peers=pthread
        for condition in core $(for l in $levels; do echo "none:$l"; done); do
            case $condition in
            core) bind=core noise=0 ;;
            *) bind=none noise=$(noise_of "${condition#none:}" "$n") ;;
            esac
            for reactive in on off; do
                echo "conditions.sh: $n $kind, bind $bind, $noise busy, reactive $reactive" >&2
                TOPSYNC_REACTIVE=$reactive "$bench" barrier "--$kind" "$n" --algorithm auto \
                    --bind "$bind" --noise "$noise" --iterations "$iters" --runs "$runs" \
                    --run-ms "$run_ms" --peers "$peers" --json \
                    >"$json_dir/$kind-$n-$bind-$noise-$reactive.json"
            done
        done
    done
done
python3 scripts/conditions_report.py "$json_dir"
mpi_np=${MPI_NP-4 8}
cases=""
for np in $mpi_np; do
    for mpi in openmpi mpich; do
        command -v "$([ $mpi = openmpi ] && echo mpirun.openmpi || echo mpiexec.mpich)" >/dev/null &&
            cases="$cases $mpi:$np:none:world:np"
    done
done
if [ -n "$cases" ]; then
    echo
    echo "MPI_Barrier, ranks unbound beside as many busy processes, preloaded against the MPI's own"
    echo "(scripts/mpi_oversub.sh, runs of $(awk -v ms="$run_ms" 'BEGIN { printf "%.2f", ms / 1000 }') s, median of $runs):"
    echo
    RUNS=$runs ITERS=$(awk -v ms="$run_ms" 'BEGIN { printf "%.3f", ms / 1000 }') CASES="$cases" \
        scripts/mpi_oversub.sh "$build" | grep -E '^\|'
fi

