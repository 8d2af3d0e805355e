#!/usr/bin/env bash
# Small collectives under every MPI (issue 34, docs/results.md): the MPI's
# own MPI_Allreduce / MPI_Reduce / MPI_Bcast against libtopsync-mpi's,
# bench/coll_mpi.c built with each MPI's own compiler and run natively and
# preloaded, RUNS interleaved pairs of jobs; per size the median over pairs
# of each and preloaded / native. A Markdown table on stdout.
#
#   usage: scripts/coll_compare.sh [BUILD_DIR]
#   environment: MPIS (default: openmpi mpich openmpi5 mpich5 impi
#   mpich5-abi; those missing are skipped, saying so), OPS (default
#   allreduce reduce bcast), SIZES (default 8,1024), NP (default 2), BIND
#   (core | none, default core), RUNS (default 5), ITERS (calls per run,
#   default 5000), PRELOAD_ENV (VAR=VALUE words set in the preloaded runs,
#   e.g. TOPSYNC_COLL_MAX_BYTES=65536 to measure past the limit); LIB_DIR:
#   where the libtopsync-mpi-*.so are.
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(readlink -f "${1:-build}")
mpis=${MPIS:-openmpi mpich openmpi5 mpich5 impi mpich5-abi}
ops=${OPS:-allreduce reduce bcast} sizes=${SIZES:-8,1024}
np=${NP:-2} bind=${BIND:-core} runs=${RUNS:-5} iters=${ITERS:-5000}
case $bind in core | none) ;; *) echo "coll_compare: BIND=$bind: valid: core, none" >&2; exit 2 ;; esac
libdir=$(readlink -f "${LIB_DIR:-$build/mpi}")
. scripts/mpi_matrix.sh # the OMPI_* settings, $matrix, mpi_usable, launcher_of, median
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "| MPI | op | bytes | np, binding | native ns | preloaded ns | preloaded / native |"
echo "|---|---|---:|---|---:|---:|---:|"
for mpi in $mpis; do
    mpi_usable coll_compare "$mpi" || continue
    # the sources and paths of bench/CMakeLists.txt's topsync-bench-coll-mpi
    I_MPI_ROOT=$prefix "$cc" -O2 -o "$tmp/coll-$mpi" bench/coll_mpi.c bench/bench_common.c \
        tools/exe_dir.c -Iinclude -Isrc -Ibench -Itools -L"$build/src" -L"$build" -ltopsync -lm -ldl \
        -Wl,-rpath,"$build" -Wl,-rpath,"$build/src"
    for op in $ops; do
        : >"$tmp/native.json" && : >"$tmp/preloaded.json"
        for ((r = 0; r < runs; r++)); do
            for how in native preloaded; do
                envs=()
                # shellcheck disable=SC2206 # PRELOAD_ENV: words
                [ $how = preloaded ] && envs=(LD_PRELOAD="$lib" ${PRELOAD_ENV:-})
                launcher_of "$mpi" "$np" "$bind" "${envs[@]}"
                I_MPI_ROOT=$prefix timeout 300 "${launcher[@]}" "$tmp/coll-$mpi" "$op" \
                    --sizes "$sizes" --iterations "$iters" --runs 3 --json \
                    >>"$tmp/$how.json" 2>"$tmp/err" || {
                    echo "coll_compare: $mpi $op $how failed: $(tail -3 "$tmp/err")" >&2
                    exit 1
                }
            done
        done
        python3 - "$tmp/native.json" "$tmp/preloaded.json" "$mpi" "$op" "$np, $bind" <<'PY'
import json, statistics, sys
def load(path):
    # one JSON array per job, concatenated
    text, at, out = open(path).read(), 0, {}
    decoder = json.JSONDecoder()
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at >= len(text):
            return out
        records, at = decoder.raw_decode(text, at)
        for rec in records:
            out.setdefault(rec["bytes"], []).append((rec["ns"], rec["impl"]))
native, pre = load(sys.argv[1]), load(sys.argv[2])
for size in sorted(native):
    n = statistics.median(v for v, _ in native[size])
    p = statistics.median(v for v, _ in pre[size])
    assert all(i == "mpi" for _, i in native[size]) and all(i == "topsync" for _, i in pre[size])
    print(f"| {sys.argv[3]} | {sys.argv[4]} | {size} | {sys.argv[5]} | {n:.0f} | {p:.0f} | {p / n:.2f} |")
PY
    done
done
