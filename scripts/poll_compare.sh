#!/usr/bin/env bash
# A leader's scan of its members (TOPSYNC_POLL=scan, the default) against
# the ordered loop (TOPSYNC_POLL=ordered), measured on this machine in one
# script: the algorithms that use it (topo, sense-reversing-counter and -gr,
# mcs), 2 threads, 2 processes, 8 and 64 threads (oversubscribed), each
# mode ROUNDS times in alternation, the benchmark's own protocol (5 runs,
# trimmed mean) per round. Prints per case the median latency of each mode
# and the median of the per-round ratios scan / ordered (docs/results.md).
#
# usage: scripts/poll_compare.sh [BUILD_DIR] [ROUNDS]   (default build, 5)
set -euo pipefail
build=${1:-build}
rounds=${2:-5}
bench=$build/bench/topsync-bench
[ -x "$bench" ] || { echo "poll_compare: no $bench (scripts/build.sh)" >&2; exit 2; }
out=$(mktemp -d "${TMPDIR:-/tmp}/topsync-poll.XXXXXX")
trap 'rm -rf "$out"' EXIT
algs=(topo sense-reversing-counter sense-reversing-gr mcs)
cases=("threads 2 --wait spin" "processes 2 --wait spin" "threads 8 --wait block"
       "threads 64 --wait block")
for r in $(seq 1 "$rounds"); do
    for c in "${cases[@]}"; do
        set -- $c
        kind=$1 n=$2 wait=$4
        for alg in "${algs[@]}"; do
            for mode in scan ordered; do
                TOPSYNC_POLL=$mode "$bench" barrier --"$kind" "$n" --wait "$wait" \
                    --algorithm "$alg" --peers none --iterations 1000 --runs 5 --json \
                    >"$out/$kind-$n-$alg-$mode-$r.json"
            done
        done
    done
done
python3 - "$out" "$rounds" "${algs[@]}" <<'EOF'
import json, os, statistics, sys
out, rounds, algs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
cases = [("threads", 2), ("processes", 2), ("threads", 8), ("threads", 64)]
print(f"TOPSYNC_POLL scan against ordered, {rounds} rounds in alternation "
      "(median us per mode; median of the per-round ratios)\n")
print("| case | algorithm | scan us | ordered us | scan / ordered |")
print("|---|---|---:|---:|---:|")
for kind, n in cases:
    per = {}
    for alg in algs:
        for r in range(1, rounds + 1):
            for mode in ("scan", "ordered"):
                with open(os.path.join(out, f"{kind}-{n}-{alg}-{mode}-{r}.json")) as f:
                    for rec in json.load(f):
                        per.setdefault(alg, {}).setdefault(mode, []).append(rec["latency_ns"])
    for alg, m in per.items():
        ratios = [s / o for s, o in zip(m["scan"], m["ordered"]) if o > 0]
        print(f"| {n} {kind} | {alg} | {statistics.median(m['scan']) / 1000:.3f} | "
              f"{statistics.median(m['ordered']) / 1000:.3f} | "
              f"{statistics.median(ratios):.2f} |")
EOF
