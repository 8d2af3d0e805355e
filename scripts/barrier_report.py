#!/usr/bin/env python3
"""Summarize topsync-bench barrier --json outputs as a Markdown table.

usage: barrier_report.py out/bench-barrier-*.json

For every participant count: each algorithm's latency (design.md section 4
protocol), its ratio to glibc's pthread_barrier and to Concurrency Kit's
best barrier measured in the same run, and the figures the project tracks:
best topsync / best CK, best topsync / pthread, auto / pthread.
"""
import json
import sys


def load(paths):
    runs = {}
    for path in paths:
        with open(path) as f:
            records = json.load(f)
        if records:
            runs[records[0]["participants"]] = records
    return runs


def fmt_ratio(x):
    return "n/a" if x is None else f"{x:.3f}x"


def main(paths):
    if not paths:
        print(__doc__)
        return 2
    for n, records in sorted(load(paths).items()):
        by_name = {r["algorithm"]: r for r in records if r["latency_ns"] > 0}
        pthread = by_name.get("peer:pthread", {}).get("latency_ns")
        ck = [r for name, r in by_name.items() if name.startswith("peer:ck-")]
        ck_best = min(ck, key=lambda r: r["latency_ns"]) if ck else None
        ours = [r for name, r in by_name.items() if not name.startswith("peer:")]
        best = min(ours, key=lambda r: r["latency_ns"]) if ours else None
        auto = by_name.get("auto")

        print(f"\n### {n} participants\n")
        print("| algorithm | resolved | wait | latency (ns) | vs pthread | vs best CK |")
        print("|---|---|---|---:|---:|---:|")
        for r in sorted(records, key=lambda r: r["latency_ns"]):
            lat = r["latency_ns"]
            vs_p = lat / pthread if pthread else None
            vs_ck = lat / ck_best["latency_ns"] if ck_best else None
            print(f"| {r['algorithm']} | {r.get('resolved', '')} | {r['wait']} | {lat:.1f} | "
                  f"{fmt_ratio(vs_p)} | {fmt_ratio(vs_ck)} |")
        print()
        if best and ck_best:
            print(f"- best topsync ({best['algorithm']}, {best['latency_ns']:.1f} ns) / "
                  f"best CK ({ck_best['algorithm']}, {ck_best['latency_ns']:.1f} ns): "
                  f"{best['latency_ns'] / ck_best['latency_ns']:.3f}x")
        if best and pthread:
            print(f"- best topsync / pthread_barrier: {best['latency_ns'] / pthread:.4f}x")
        if auto and pthread:
            print(f"- default (auto = {auto.get('resolved', '?')}, wait {auto['wait']}) / "
                  f"pthread_barrier: {auto['latency_ns'] / pthread:.3f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
