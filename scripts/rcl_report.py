#!/usr/bin/env python3
"""Summarize `topsync-bench rcl --json` output: Markdown tables and PNG plots.

usage: rcl_report.py BENCH.json [OUT_PREFIX]

Prints, per access pattern, every lock's throughput (Mops/s) by thread
count, the RCL configurations against each other (RCL-aware vs default
allocation, NUMA vs default init, hierarchical vs no affinity), and the
round trips (RCL single client against the cache-line floor). With
OUT_PREFIX and matplotlib, writes OUT_PREFIX-<pattern>.png: throughput
against threads, one line per lock (RCL in its best configuration and in
the papers' baseline configuration).
"""
import json
import os
import subprocess
import sys


def key(r):
    return (r["lock"], r["pattern"], r["threads"], r["alloc"], r["init"], r.get("affinity", "none"))


def numa_node_count():
    """NUMA nodes of this machine, as hwloc sees them (hwloc-calc, Debian's
    hwloc package); 0 when it cannot tell."""
    try:
        out = subprocess.run(["hwloc-calc", "--number-of", "numanode", "machine:0"],
                             capture_output=True, text=True, timeout=60)
        return int(out.stdout.strip()) if out.returncode == 0 else 0
    except (OSError, ValueError, subprocess.SubprocessError):
        return 0


def main(path, prefix=None):
    with open(path) as f:
        records = json.load(f)
    rows = [r for r in records if "lock" in r]
    metric = next((r for r in records if r.get("metric") == "roundtrip_ns"), None)
    patterns = [p for p in ("sequential", "strided", "random") if any(r["pattern"] == p for r in rows)]
    threads = sorted({r["threads"] for r in rows})
    locks = []
    for r in rows:
        if r["lock"] not in locks:
            locks.append(r["lock"])

    def best(lock, pattern, t, **fixed):
        vals = [r["mops"] for r in rows if r["lock"] == lock and r["pattern"] == pattern
                and r["threads"] == t and all(r.get(k) == v for k, v in fixed.items())]
        return max(vals) if vals else None

    def cell(v):
        return "-" if v is None else f"{v:.2f}"

    for p in patterns:
        print(f"\n### {p}: Mops/s, best configuration of each lock\n")
        print("| lock | " + " | ".join(f"{t} thr" for t in threads) + " |")
        print("|---|" + "---|" * len(threads))
        for lock in locks:
            print(f"| {lock} | " + " | ".join(cell(best(lock, p, t)) for t in threads) + " |")

    cpus = len(os.sched_getaffinity(0))  # the report runs where the benchmark ran
    numa_nodes = numa_node_count()
    print(f"\nRCL's server thread takes a core of its own: with {cpus} CPUs here, RCL's "
          f"clients share the other {cpus - 1}, while the other locks' threads use all {cpus}; "
          f"thread counts are clients (worker threads), the server not counted.")

    print("\n### RCL configurations (ratio of medians, same run)\n")
    if numa_nodes == 1:
        print("This machine has one NUMA node: RCL-aware and default allocation, and NUMA "
              "and default initialization, place memory identically here, so their ratios "
              "are run-to-run noise, not an effect of the placement (the papers measure it "
              "on 4-8 nodes).\n")
    print("| pattern | threads | rcl-aware / default alloc | numa / default init "
          "| hierarchical / no affinity |")
    print("|---|---|---|---|---|")
    for p in patterns:
        for t in threads:
            def ratio(field, a, b):
                xa = [r["mops"] for r in rows if r["lock"] == "rcl" and r["pattern"] == p
                      and r["threads"] == t and r.get(field) == a]
                xb = [r["mops"] for r in rows if r["lock"] == "rcl" and r["pattern"] == p
                      and r["threads"] == t and r.get(field) == b]
                if not xa or not xb:
                    return "-"
                xa.sort()
                xb.sort()
                return f"{xa[len(xa) // 2] / xb[len(xb) // 2]:.2f}x"
            print(f"| {p} | {t} | {ratio('alloc', 'rcl-aware', 'default')} | "
                  f"{ratio('init', 'numa', 'default')} | "
                  f"{ratio('affinity', 'hierarchical', 'none')} |")

    if metric and metric.get("rcl") and metric.get("c2c"):
        print(f"\nround trip, one client, empty critical section: RCL {metric['rcl']:.1f} ns, "
              f"cache line core to core {metric['c2c']:.1f} ns "
              f"({metric['rcl'] / metric['c2c']:.2f}x the floor). The floor is one cache "
              f"line bounced between the same two cores, measured in the same run; an RCL "
              f"request and its completion are the same two line transfers, so a ratio near "
              f"1 (below it too) means RCL adds nothing measurable: the two medians differ "
              f"by run-to-run variation (0.79x-1.27x over five runs, docs/results.md).")

    if not prefix:
        return
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib missing: no plots)", file=sys.stderr)
        return
    for p in patterns:
        fig, ax = plt.subplots(figsize=(6, 4))
        for lock in locks:
            ys = [best(lock, p, t) for t in threads]
            pts = [(t, y) for t, y in zip(threads, ys) if y is not None]
            if pts:
                ax.plot([x for x, _ in pts], [y for _, y in pts], marker="o", label=lock)
        ax.set_xlabel("worker threads")
        ax.set_ylabel("Mops/s (best configuration)")
        ax.set_yscale("log")
        ax.set_xticks(threads)
        ax.set_title(f"RCL protocol, {p} access, {cpus} CPUs\n(RCL's server takes 1 of "
                     f"them; its clients share the other {cpus - 1})", fontsize=9)
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(f"{prefix}-{p}.png", dpi=100)
        plt.close(fig)
        print(f"wrote {prefix}-{p}.png", file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)
