#!/usr/bin/env bash
# Does auto, after topsync-tune, run as fast as the best algorithm? (issue 11)
# Tunes this machine for threads {2, 8} and processes {2, 8} (and, when the
# MPI benchmarks are built, an Open MPI job of 2 bound and 8 unbound ranks)
# into a fresh tuning file, then runs the benchmark REPS times (default 3)
# for each case with that file, and reports auto's latency against the best
# algorithm of the same runs (medians over the repetitions), with the step
# and figures auto chose on.
#   usage: scripts/tune_check.sh [BUILD_DIR]    Output: Markdown, and out/tune/
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=out/tune
mkdir -p "$out"
reps=${REPS:-3}
export TOPSYNC_TUNING=$PWD/$out/tuning.json
rm -f "$TOPSYNC_TUNING"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
bench=$build/bench/topsync-bench

"$build/bench/topsync-tune" --threads 2,8 --processes 2,8 >"$out/tune.log"
mpi=0
if [ -x "$build/bench/topsync-bench-mpi-openmpi" ] && command -v mpirun.openmpi >/dev/null; then
    mpi=1
    mpirun.openmpi --oversubscribe -np 2 --bind-to core "$build/bench/topsync-tune" --mpi >>"$out/tune.log"
    mpirun.openmpi --oversubscribe -np 8 --bind-to none "$build/bench/topsync-tune" --mpi >>"$out/tune.log"
fi

for k in $(seq "$reps"); do
    "$bench" barrier --threads 2 --peers none --json >"$out/threads-2-$k.json"
    "$bench" barrier --threads 8 --peers none --json >"$out/threads-8-$k.json"
    "$bench" barrier --processes 2 --json >"$out/processes-2-$k.json"
    "$bench" barrier --processes 8 --bind none --json >"$out/processes-8-$k.json"
    if [ "$mpi" = 1 ]; then
        mpirun.openmpi --oversubscribe -np 2 --bind-to core "$bench" barrier --mpi --json \
            >"$out/mpi-2-$k.json"
        mpirun.openmpi --oversubscribe -np 8 --bind-to none "$bench" barrier --mpi --json \
            >"$out/mpi-8-$k.json"
    fi
done
{
    echo "explain (topsync-info --explain):"
    "$build/tools/topsync-info" --explain --np 2 | tail -1
    "$build/tools/topsync-info" --explain --np 8 | tail -1
    "$build/tools/topsync-info" --explain --np 2 --processes | tail -1
    "$build/tools/topsync-info" --explain --np 8 --processes --bind-to none | tail -1
} >"$out/explain.txt"

python3 - "$out" "$reps" "$mpi" <<'PY'
import json, statistics, sys
out, reps, mpi = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
cases = [("threads", 2), ("threads", 8), ("processes", 2), ("processes", 8)]
if mpi:
    cases += [("mpi", 2), ("mpi", 8)]
print("| case | auto | auto ns | best | best ns | auto / best |")
print("|---|---|---:|---|---:|---:|")
worst = 0
for kind, n in cases:
    per = {}
    resolved = {}
    for k in range(1, reps + 1):
        for r in json.load(open(f"{out}/{kind}-{n}-{k}.json")):
            name = r["algorithm"]
            if name.startswith("peer:") or name.startswith("preload:") or r["latency_ns"] <= 0:
                continue
            per.setdefault(name, []).append(r["latency_ns"])
            resolved[name] = r.get("resolved", "")
    med = {a: statistics.median(v) for a, v in per.items()}
    best = min((a for a in med if a != "auto"), key=med.get)
    ratio = med["auto"] / med[best]
    worst = max(worst, ratio)
    print(f"| {kind} {n} | {resolved['auto']} | {med['auto']:.0f} | {best} | {med[best]:.0f} "
          f"| {ratio:.3f} |")
print(f"\nworst auto / best: {worst:.3f} (goal: 1.1 or less)")
PY
echo
cat "$out/explain.txt"
