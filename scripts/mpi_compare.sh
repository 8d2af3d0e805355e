#!/usr/bin/env bash
# The MPI_Barrier comparison on this machine (design.md section 4): for each MPI
# found, np = 2 (bound to cores) and np = 4, 8 (oversubscribed), the three
# mappings (core, numa, socket), every topsync algorithm and the MPI's own
# barrier in the same job; for Open MPI also coll_tuned's barrier algorithms
# 1-6 (linear, double ring, recursive doubling, Bruck, two proc, tree) as
# further peers. Writes out/mpi/*.json, then scripts/mpi_report.py writes
# out/mpi/mpi_barrier.csv, out/mpi/*.png and out/mpi/summary.md.
#   usage: scripts/mpi_compare.sh [BUILD_DIR]   (NPS="2 4 8" MAPS="core numa socket")
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=out/mpi
mkdir -p "$out"
rm -f "$out"/*.json
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader
bench=$build/bench/topsync-bench
nps=${NPS:-2 4 8}
maps=${MAPS:-core numa socket}
cores=$("$build/tools/topsync-info" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["cores"])')
# the machine, for the report's labels (oversubscription, equal mappings)
"$build/tools/topsync-info" --json > "$out/machine.info"

for impl in openmpi mpich; do
    [ -x "$build/bench/topsync-bench-mpi-$impl" ] || { echo "skip $impl (not built)"; continue; }
    for np in $nps; do
        for map in $maps; do
            label="np$np-$map"
            if [ "$impl" = openmpi ]; then
                bind=core
                [ "$np" -gt "$cores" ] && bind=core:overload-allowed
                launch=(mpirun.openmpi --oversubscribe -np "$np" --map-by "$map" --bind-to "$bind")
            else
                launch=(mpiexec.mpich -n "$np" -map-by "$map" -bind-to core)
            fi
            echo "== $impl $label"
            timeout 900 "${launch[@]}" "$bench" barrier --mpi --label "$label" \
                --output "$out/$impl-$label.json" | sed 's/^/   /'
            if [ "$impl" = openmpi ]; then
                for alg in 1 2 3 4 5 6; do
                    # 5 ("two proc") exists for 2 ranks only
                    [ "$alg" -eq 5 ] && [ "$np" -ne 2 ] && continue
                    timeout 600 "${launch[@]}" --mca coll_tuned_use_dynamic_rules 1 \
                        --mca coll_tuned_barrier_algorithm $alg "$bench" barrier --mpi \
                        --algorithm none --peer-name "peer:ompi-tuned-$alg" --label "$label" \
                        --output "$out/$impl-$label-tuned$alg.json" >/dev/null 2>&1 ||
                        echo "   coll_tuned barrier algorithm $alg failed for np=$np (left out)"
                done
            fi
        done
    done
done
py=python3; [ -x /usr/bin/python3 ] && py=/usr/bin/python3   # Debian's, with python3-matplotlib
"$py" scripts/mpi_report.py "$out"
