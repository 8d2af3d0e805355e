#!/usr/bin/env bash
# The thread barrier where users run it (issue 35): topsync's default
# (auto, block) against glibc's pthread_barrier and libgomp's barrier in the
# same process, and the pthread drop-in against glibc in an unmodified
# program, under three conditions side by side: threads bound to cores on
# an idle machine, unbound on an idle machine, unbound with as many busy
# neighbour processes as CPUs (topsync-bench --noise); and the same with
# forked processes against glibc's process-shared barrier. A Markdown table on
# stdout; every figure is the median over RUNS runs of the paper's protocol.
#
#   usage: scripts/conditions.sh [BUILD_DIR]
#   environment: THREADS (default: "2 8"), ITERS (default 5000), RUNS
#   (default 5), NOISE (busy processes of the busy condition, default: the
#   machine's CPUs)
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(readlink -f "${1:-build}")
bench=$build/bench/topsync-bench
threads=${THREADS:-2 8} iters=${ITERS:-5000} runs=${RUNS:-5}
noise=${NOISE:-$(nproc)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for n in $threads; do
    for condition in "core 0" "none 0" "none $noise"; do
        set -- $condition
        "$bench" barrier --threads "$n" --algorithm auto --bind "$1" --noise "$2" \
            --iterations "$iters" --runs "$runs" --peers pthread,omp,program --json \
            >"$tmp/threads-$n-$1-$2.json"
        # forked processes: topsync's process-shared barrier against glibc's
        "$bench" barrier --processes "$n" --algorithm auto --bind "$1" --noise "$2" \
            --iterations "$iters" --runs "$runs" --peers pthread --json \
            >"$tmp/processes-$n-$1-$2.json"
    done
done
python3 - "$tmp" <<'EOF'
import glob, json, os, sys
rows = []
for path in glob.glob(os.path.join(sys.argv[1], "*.json")):
    records = {r["algorithm"]: r for r in json.load(open(path))}
    auto = records["auto"]
    def median(name):
        r = records.get(name)
        return r["median_ns"] if r else float("nan")
    rows.append((auto["kind"], auto["participants"], auto["bind"], auto["noise"],
                 auto["resolved"], median("auto"), median("peer:pthread"), median("peer:omp"),
                 median("peer:pthread-program"), median("preload:pthread-program")))
rows.sort(key=lambda r: (r[0] != "threads", r[1], r[2] == "none", r[3]))
def figure(x, digits=1):
    return "-" if x != x else f"{x:.{digits}f}"
print("| participants | condition | topsync (auto) ns | glibc ns | libgomp ns | topsync / glibc "
      "| topsync / libgomp | pthread program: preloaded / glibc |")
print("|---|---|---:|---:|---:|---:|---:|---:|")
for kind, n, bind, noise, resolved, t, g, o, pg, pp in rows:
    condition = ("bound" if bind == "core" else "unbound") + ", " + (
        f"{noise} busy neighbour processes" if noise else "idle")
    print(f"| {n} {kind} | {condition} | {t:.1f} ({resolved}) | {figure(g)} | {figure(o)} "
          f"| {figure(t / g, 2)} | {figure(t / o, 2)} | {figure(pp / pg, 2)} |")
EOF
