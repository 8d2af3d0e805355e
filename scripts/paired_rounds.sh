#!/usr/bin/env bash
# topsync's default barrier (auto, block) against glibc's and libgomp's,
# unbound beside busy neighbours (issue 35 item 1), pooled over many
# commands: each topsync-bench command takes its rows' runs in rounds, and
# every run's ratio to the peer's run of the same round is kept; this
# prints, per configuration, the median of all those ratios and its
# bootstrap 95 % interval. One command's median of a few ratios is too
# noisy here: the same barrier measured 1.0-1.6x itself (docs/results.md,
# "Paired rounds").
#
#   usage: scripts/paired_rounds.sh [BUILD_DIR]
#   environment: CONFIGS (default "threads:8 processes:8 threads:2
#   processes:2"), COMMANDS (per configuration, default 8), RUNS (per
#   command, default 9), ITERS (default 2000), RUN_MS (each run at least
#   that long, default 250: a busy node's runs span many scheduler slices),
#   NOISE (busy processes, default: the machine's CPUs), PEERS (default
#   pthread,omp,program; the processes' only peer is glibc's)
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(readlink -f "${1:-build}")
bench=$build/bench/topsync-bench
configs=${CONFIGS:-threads:8 processes:8 threads:2 processes:2}
commands=${COMMANDS:-8} runs=${RUNS:-9} iters=${ITERS:-2000} run_ms=${RUN_MS:-250}
noise=${NOISE:-$(nproc)} peers=${PEERS:-pthread,omp,program}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "| participants | topsync / glibc | topsync / libgomp | drop-in / glibc program |"
echo "|---|---|---|---|"
for config in $configs; do
    kind=${config%%:*} n=${config#*:}
    case $kind in threads | processes) ;; *)
        echo "paired_rounds.sh: CONFIGS takes threads:N or processes:N, not '$config'" >&2
        exit 2 ;;
    esac
    out=$tmp/$kind-$n.jsonl
    for _ in $(seq "$commands"); do
        "$bench" barrier --"$kind" "$n" --bind none --noise "$noise" --algorithm auto \
            --iterations "$iters" --runs "$runs" --run-ms "$run_ms" --peers "$peers" --json | tr -d '\n' >>"$out"
        echo >>"$out"
    done
    python3 - "$out" "$n $kind" <<'PY'
import json, random, statistics, sys

pairs = {"glibc": ("auto", "peer:pthread"), "libgomp": ("auto", "peer:omp"),
         "program": ("preload:pthread-program", "peer:pthread-program")}
ratios = {k: [] for k in pairs}
for line in open(sys.argv[1]):
    rows = {r["algorithm"]: r for r in json.loads(line)}
    for key, (mine, peer) in pairs.items():
        if mine in rows and peer in rows and rows[mine]["latency_ns"] > 0 < rows[peer]["latency_ns"]:
            ratios[key] += [a / b for a, b in zip(rows[mine]["runs_ns"], rows[peer]["runs_ns"])]
random.seed(1)


def cell(x):
    if not x:
        return "-"
    medians = sorted(statistics.median(random.choices(x, k=len(x))) for _ in range(2000))
    return f"{statistics.median(x):.2f} [{medians[50]:.2f}, {medians[1949]:.2f}], n = {len(x)}"


print(f"| {sys.argv[2]} | {cell(ratios['glibc'])} | {cell(ratios['libgomp'])} | {cell(ratios['program'])} |")
PY
done
echo
echo "Unbound, $noise busy neighbour processes, $commands commands of $runs runs of $iters barriers"
echo "and at least $run_ms ms;"
echo "each cell: the median of every run's ratio to the peer's run of its round [bootstrap 95 %]."
