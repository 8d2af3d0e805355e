#!/usr/bin/env bash
# The main job on a fresh Debian machine: set up, build, show the machine's
# topology and groups, tune auto for this machine (topsync-tune), and run
# the thread barrier benchmark (the paper's
# protocol, topsync against pthread, OpenMP and Concurrency Kit in the same
# process) with one thread per core and oversubscribed, and where users run
# it (bound and idle, unbound, unbound beside busy processes), then the MPI_Barrier
# comparison against Open MPI and MPICH and programs that need MPI's
# progress inside it, the small collectives (threads, and MPI_Allreduce,
# MPI_Reduce, MPI_Bcast preloaded against every MPI), then the RCL benchmark (the RCL
# papers' protocol against mutex, TTAS, CK MCS, CK cohort and flat
# combining, with its round trip against the cache-line floor), then the
# machine model: its prediction against this machine's measured barriers,
# the barrier paper's figures and three machines we do not have
# (docs/model.md). Results go to out/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-debian.sh
scripts/build.sh >/dev/null
mkdir -p out
echo "== topsync-info (this machine) =="
build/tools/topsync-info
echo
echo "== topsync-info: the paper's Kunpeng 920, 14 ranks map-by numa =="
build/tools/topsync-info --topology "pack:2 numa:2 l3:1 core:32 pu:1" --np 14 --map-by numa
cores=$(build/tools/topsync-info --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["cores"])')
echo
echo "== topsync-tune: measure every candidate here, for auto (out/tuning.json) =="
# The tuning goes to out/ and this script's benchmarks use it; `topsync-tune`
# without --output writes the per-user cache that auto reads by default.
build/bench/topsync-tune --threads "$cores,$((cores * 4)),64" --processes "$cores,$((cores * 4))" \
    --bind core --output out/tuning.json | tee out/tune.log
export TOPSYNC_TUNING=$PWD/out/tuning.json
for n in $cores $((cores * 4)) 64; do
    echo
    echo "== topsync-bench barrier --threads $n =="
    build/bench/topsync-bench barrier --threads "$n" --output "out/bench-barrier-$n.json" |
        tee "out/bench-barrier-$n.txt"
done
python3 scripts/barrier_report.py out/bench-barrier-*.json > out/bench-barrier-summary.md
# each Debian MPI's own MPI_Barrier among as many ranks, bound alike (core
# r mod cores), for the figure: what a user's MPI gives without topsync
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
mpi_own=()
for n in $cores $((cores * 4)); do
    for mpi in openmpi mpich; do
        case $mpi in
        openmpi) launch=(mpirun.openmpi --oversubscribe --bind-to core:overload-allowed -np "$n") ;;
        mpich) launch=(mpiexec.mpich -bind-to core -np "$n") ;;
        esac
        command -v "${launch[0]}" >/dev/null || continue
        # oversubscribed, MPICH's barrier busy-polls: tens of ms each
        timeout 300 "${launch[@]}" build/bench/topsync-bench barrier --mpi --algorithm none \
            --iterations 200 --runs 3 --json >"out/bench-mpi-own-$mpi-$n.json" 2>/dev/null &&
            mpi_own+=("out/bench-mpi-own-$mpi-$n.json") ||
            echo "main.sh: $mpi's own barrier at $n ranks did not run (left out of the figure)"
    done
done
# the paper's kind of figure: latency against participants, per algorithm
/usr/bin/python3 scripts/barrier_plot.py out/bench-barrier-latency.png \
    "this machine ($cores CPUs), threads and MPI ranks bound round robin, nothing else running" \
    out/bench-barrier-*.json "${mpi_own[@]}"
{
    echo
    echo "### What auto picked, and why (topsync-info --explain)"
    echo
    for n in $cores $((cores * 4)) 64; do
        echo "- $n threads: $(build/tools/topsync-info --explain --np "$n" | grep -m1 '^  auto: ' | sed 's/^ *//')"
    done
    for n in $cores $((cores * 4)); do
        echo "- $n processes: $(build/tools/topsync-info --explain --np "$n" --processes | grep -m1 '^  auto: ' |
                                sed 's/^ *//')"
    done
} >> out/bench-barrier-summary.md
cat out/bench-barrier-summary.md
echo
echo "== Where users run: bound/idle, unbound beside 0, P/4, P, 2P busy processes, reactive on and off (scripts/conditions.sh) =="
# 2 and 4 participants, 3 runs of 250 ms: about half an hour here (the
# whole matrix, THREADS="2 4 8 16" and 5 runs, takes hours beside libgomp)
rm -rf out/conditions
THREADS=${CONDITIONS_THREADS:-2 4} RUNS=${CONDITIONS_RUNS:-3} JSON_DIR=out/conditions \
    scripts/conditions.sh build | tee out/bench-conditions.md
/usr/bin/python3 scripts/conditions_report.py out/conditions --plot out/bench-conditions.png \
    "this machine ($cores CPUs): topsync's default against glibc and libgomp, bound and idle, unbound beside busy processes (scripts/conditions.sh)" \
    >/dev/null
echo
echo "== MPI_Barrier: topsync against Open MPI and MPICH (scripts/mpi_compare.sh) =="
scripts/mpi_compare.sh build > out/mpi-compare.log 2>&1 || { tail -20 out/mpi-compare.log; exit 1; }
grep -E '^## |Default' out/mpi/summary.md
echo
# The MPIs users run today (scripts/setup-mpis.sh, installed by setup unless
# TOPSYNC_SETUP_MPI_MATRIX=0): each one's own barrier against the preloaded
# library, and which component serves it (issue 24).
matrix_cases=""
for m in openmpi5 mpich5 impi; do
    [ -x "${TOPSYNC_MPI_MATRIX_DIR:-/var/cache/topsync-mpis}/$m/bin/mpicc" ] &&
        matrix_cases="$matrix_cases $m:2:core:world $m:4:none:world"
done
if [ -n "$matrix_cases" ]; then
    echo "== MPI_Barrier under Open MPI 5, MPICH 5, Intel MPI (scripts/mpi_oversub.sh) =="
    RUNS=3 CASES="$matrix_cases" scripts/mpi_oversub.sh build > out/mpi-matrix.md 2> out/mpi-matrix.log ||
        { tail -20 out/mpi-matrix.log; exit 1; }
    cat out/mpi-matrix.md
    echo
fi
echo "== Programs that need MPI's progress inside MPI_Barrier (scripts/mpi_progress.sh) =="
RUNS=3 scripts/mpi_progress.sh build > out/mpi-progress.md 2> out/mpi-progress.log ||
    { tail -20 out/mpi-progress.log; exit 1; }
cat out/mpi-progress.md out/mpi-progress.log
echo
echo "== What the MPI path adds to a barrier, every MPI installed (scripts/mpi_path_cost.sh) =="
RUNS=3 scripts/mpi_path_cost.sh build > out/mpi-path-cost.md 2> out/mpi-path-cost.log ||
    { tail -20 out/mpi-path-cost.log; exit 1; }
cat out/mpi-path-cost.md out/mpi-path-cost.log
echo
echo "== Small collectives: topsync-bench allreduce (threads), and MPI_Allreduce/Reduce/Bcast"
echo "   preloaded against every MPI installed, np 2 bound (scripts/coll_compare.sh) =="
build/bench/topsync-bench allreduce --threads 2 --sizes 8,64,1024,4096 --json > out/bench-allreduce-2.json
build/bench/topsync-bench allreduce --threads 2 --sizes 8,64,1024,4096 | tee out/bench-allreduce-2.txt
RUNS=3 scripts/coll_compare.sh build > out/coll-compare.md 2> out/coll-compare.log ||
    { tail -20 out/coll-compare.log; exit 1; }
cat out/coll-compare.md out/coll-compare.log
echo
echo "== topsync-bench rcl (design.md section 5.4 protocol) =="
build/bench/topsync-bench rcl --output out/bench-rcl.json --csv out/bench-rcl.csv \
    > out/bench-rcl.txt 2> out/bench-rcl.err || { cat out/bench-rcl.err; exit 1; }
py=/usr/bin/python3 # Debian's, with python3-matplotlib for the plots
[ -x "$py" ] || py=python3
"$py" scripts/rcl_report.py out/bench-rcl.json out/bench-rcl | tee out/bench-rcl-summary.md
echo
echo "== machine model: predicted against measured here, and the paper's figures (docs/model.md) =="
mkdir -p out/model
"$py" scripts/model_validate.py build --out out/model > out/model/report.log 2>&1 ||
    { tail -20 out/model/report.log; exit 1; }
grep -E '^- |^### ' out/model/validation.md
echo
echo "== the scheduler model: busy nodes predicted against measured here (docs/model.md section 9) =="
"$py" scripts/sched_validate.py build --np 2,4,8 --reps 2 --run-ms 200 > out/model/sched-validation.md
grep -E '^## |^Spearman' out/model/sched-validation.md
# What to look at first: out/ holds many files (issue 55 item 5)
{
    echo "# What this run measured ($(date -u +%Y-%m-%d), $(hostname), $cores CPUs)"
    echo
    echo "Every figure here comes from this machine; each file says its conditions."
    echo "Look at these first:"
    echo
    echo "1. [bench-barrier-latency.png](bench-barrier-latency.png): barrier latency"
    echo "   against threads, per algorithm and peer (glibc, OpenMP, Concurrency Kit, each"
    echo "   MPI's own MPI_Barrier among as many ranks), bound, idle; the numbers in"
    echo "   [bench-barrier-summary.md](bench-barrier-summary.md)."
    echo "2. [bench-conditions.png](bench-conditions.png) and"
    echo "   [bench-conditions.md](bench-conditions.md): the same where users run:"
    echo "   bound and idle, unbound, and beside busy processes, as ratios to glibc."
    echo "3. [mpi/summary.md](mpi/summary.md) and [mpi-matrix.md](mpi-matrix.md):"
    echo "   MPI_Barrier preloaded against each MPI's own."
    echo "4. [coll-compare.md](coll-compare.md): MPI_Allreduce, MPI_Reduce, MPI_Bcast"
    echo "   preloaded against each MPI's own, per size."
    echo "5. [bench-rcl-summary.md](bench-rcl-summary.md): Remote Core Locking against"
    echo "   locks, with its plots (bench-rcl-*.png)."
    echo "6. [model/validation.md](model/validation.md): the machine model's predictions"
    echo "   against this machine and the paper's figures; [model/sched-validation.md]"
    echo "   (model/sched-validation.md): its scheduler's, beside busy processes."
    echo
    echo "Then: [mpi-progress.md](mpi-progress.md) (programs that need MPI progress in"
    echo "a barrier), [mpi-path-cost.md](mpi-path-cost.md) (what the MPI path adds),"
    echo "tune.log and tuning.json (what auto chose from), the raw .json and .txt files."
} > out/index.md
echo
echo "== out/index.md says what to look at first =="
