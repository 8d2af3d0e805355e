#!/usr/bin/env python3
"""Ratios over repeated thread-barrier runs, each ratio taken within one run.

usage: for i in 1 2 3 4 5 6 7; do
           build/bench/topsync-bench barrier --threads 2 --json > out/rep-$i.json; done
       scripts/barrier_ratios.py out/rep-*.json

Prints, per run, the best topsync algorithm against Concurrency Kit's best
barrier and against pthread_barrier (both measured in the same process), then
the medians: on a shared VM single runs swing, ratios within a run do less.
"""
import json
import statistics
import sys


def main(paths):
    if not paths:
        print(__doc__)
        return 2
    rows = []
    for path in paths:
        with open(path) as f:
            d = {x["algorithm"]: x["latency_ns"] for x in json.load(f) if x["latency_ns"] > 0}
        ours = min(v for k, v in d.items() if not k.startswith("peer:"))
        ck = min((v for k, v in d.items() if k.startswith("peer:ck")), default=None)
        p = d.get("peer:pthread")
        rows.append((ours / ck if ck else float("nan"), ours / p if p else float("nan"),
                     d["auto"] / p if p and "auto" in d else float("nan"), ours, ck or 0))
    for r in rows:
        print("best/CK %.3f  best/pthread %.4f  auto/pthread %.4f  (best %.1f ns, CK best %.1f ns)" % r)
    print("median over %d runs: best/CK %.3f, best/pthread %.4f, auto/pthread %.4f" % (
        len(rows), statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows),
        statistics.median(r[2] for r in rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
