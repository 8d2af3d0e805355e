#!/usr/bin/env python3
"""Summarize topsync-bench barrier --json outputs as a Markdown table.

usage: barrier_report.py out/bench-barrier-*.json

For every participant count: each algorithm's latency (design.md section 4
protocol), its ratio to glibc's pthread_barrier and to Concurrency Kit's
best barrier measured in the same run, and the figures the project tracks:
best topsync / best CK, best topsync / pthread, auto / pthread. Each
heading says what was measured (threads against this machine's CPUs, the
binding, busy neighbours); CK is compared only where its spinning barriers
are meaningful (no more threads than CPUs, no neighbours).
"""
import json
import os
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
    cpus = len(os.sched_getaffinity(0))  # the report runs where the benchmark ran
    topo_rows = []
    for n, records in sorted(load(paths).items()):
        by_name = {r["algorithm"]: r for r in records if r["latency_ns"] > 0}
        pthread = by_name.get("peer:pthread", {}).get("latency_ns")
        ck = [r for name, r in by_name.items() if name.startswith("peer:ck-")]
        ck_best = min(ck, key=lambda r: r["latency_ns"]) if ck else None
        ours = [r for name, r in by_name.items() if not name.startswith("peer:")]
        best = min(ours, key=lambda r: r["latency_ns"]) if ours else None
        auto = by_name.get("auto")

        first = records[0]
        bind = first.get("bind", "?")
        noise = first.get("noise", 0)
        oversubscribed = n > cpus
        # Concurrency Kit's barriers only spin: with more threads than CPUs
        # each episode waits for descheduled spinners (milliseconds), so a
        # ratio to them says nothing about topsync
        ck_meaningful = ck_best is not None and not oversubscribed and not noise
        conditions = [f"{n} threads on {cpus} CPUs" +
                      (f": oversubscribed {n / cpus:g}x" if oversubscribed else ""),
                      "bound to cores" if bind == "core" else f"bind {bind}",
                      f"{noise} busy neighbour threads" if noise else "idle machine"]
        print(f"\n### {n} participants ({', '.join(conditions)})\n")
        ck_head = "vs best CK" if ck_meaningful else "vs best CK (spins: not comparable here)"
        print(f"| algorithm | resolved | wait | latency (ns) | vs pthread | {ck_head} |")
        print("|---|---|---|---:|---:|---:|")
        for r in sorted(records, key=lambda r: r["latency_ns"]):
            lat = r["latency_ns"]
            vs_p = lat / pthread if pthread else None
            vs_ck = lat / ck_best["latency_ns"] if ck_meaningful else None
            print(f"| {r['algorithm']} | {r.get('resolved', '')} | {r['wait']} | {lat:.1f} | "
                  f"{fmt_ratio(vs_p)} | {fmt_ratio(vs_ck)} |")
        print()
        if best and ck_best and ck_meaningful:
            print(f"- best topsync ({best['algorithm']}, {best['latency_ns']:.1f} ns) / "
                  f"best CK ({ck_best['algorithm']}, {ck_best['latency_ns']:.1f} ns): "
                  f"{best['latency_ns'] / ck_best['latency_ns']:.3f}x")
        elif ck_best:
            print(f"- Concurrency Kit's barriers only spin; with {n} threads on {cpus} CPUs"
                  f"{' beside busy neighbours' if noise else ''} each waits for descheduled "
                  f"spinners (best CK here {ck_best['latency_ns'] / 1e6:.2f} ms), so no ratio to "
                  f"them is given")
        if best and pthread:
            print(f"- best topsync ({best['algorithm']}, wait {best['wait']}) / glibc's "
                  f"pthread_barrier (futex, sleeps at once): {best['latency_ns'] / pthread:.4f}x"
                  + (" (a spinning wait against a sleeping one: the fair comparison is the "
                     "default's, next line)" if best["wait"] == "spin" else ""))
        if auto and pthread:
            print(f"- default (auto = {auto.get('resolved', '?')}, wait {auto['wait']}) / "
                  f"pthread_barrier: {auto['latency_ns'] / pthread:.3f}x")
        topo_rows += [r for name, r in by_name.items() if name.startswith("topo")]
    if topo_rows and all(r.get("resolved", "").startswith("topo:flat") for r in topo_rows):
        print("\n### The hierarchical barrier on this machine\n")
        print("Every topo row above resolved to topo:flat: on this machine no cache, NUMA node "
              "or package holds some cores but not all (topsync-info says why it drops each "
              "level), so the hierarchical barrier runs as one flat group here and these "
              "tables do not measure its hierarchy. Where it exists: the groups of the "
              "paper's Kunpeng 920 (topsync-info, at the top of main.sh's output), the "
              "model's predictions for it (docs/model.md) and the emulated many-core "
              "machines, where it runs and is checked (ctest -L machine-vm).")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
