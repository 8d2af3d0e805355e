#!/usr/bin/env python3
"""Report of scripts/mpi_compare.sh: CSV, bar charts, the Fig. 6 table.

usage: mpi_report.py OUT_DIR

Reads OUT_DIR/*.json (records of topsync-bench barrier --mpi), writes
  OUT_DIR/mpi_barrier.csv     one row per (mpi, np, mapping, algorithm)
  OUT_DIR/bar-MPI-npN-MAP.png latency per algorithm, one chart per configuration
  OUT_DIR/fig6-MPI-npN.png    the paper's Fig. 6 style table: latency per
                              mapping, and the coefficient of variation over
                              the mappings (robustness)
  OUT_DIR/summary.md          the same tables in Markdown, with the ratios of
                              the default (auto) to the MPI's own barrier
"""
import csv
import glob
import json
import os
import statistics
import sys


def load(out_dir):
    rows = []
    for path in sorted(glob.glob(os.path.join(out_dir, "*.json"))):
        with open(path) as f:
            for r in json.load(f):
                np_, _, mapping = r["label"].partition("-")
                rows.append({
                    "mpi": r["mpi"], "np": int(np_[2:]), "mapping": mapping,
                    "algorithm": r["algorithm"], "resolved": r.get("resolved", ""),
                    "wait": r["wait"], "latency_ns": r["latency_ns"],
                    "iterations": r["iterations"],
                })
    return rows


def main(out_dir):
    rows = load(out_dir)
    if not rows:
        print("no results in", out_dir)
        return 1
    with open(os.path.join(out_dir, "mpi_barrier.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        plt = None
        print("matplotlib missing (Debian python3-matplotlib): no PNG plots")

    machine = {}
    try:
        with open(os.path.join(out_dir, "machine.info")) as f:
            machine = json.load(f)  # topsync-info --json, written by mpi_compare.sh
    except (OSError, ValueError):
        pass
    cpus = machine.get("cores") or len(os.sched_getaffinity(0))
    # map-by numa and socket differ from map-by core only where a NUMA node
    # or a package holds some cores but not all
    one_unit = "one unit holds every core"
    dropped = {d["level"]: d["reason"] for d in machine.get("dropped_levels", [])}
    mappings_equal = all(one_unit in dropped.get(level, "") for level in ("NUMANode", "Package"))
    md = ["# MPI_Barrier on this machine", "",
          "peer:mpi is the MPI's own MPI_Barrier as it selects it by default. "
          "peer:ompi-tuned-N is Open MPI's coll/tuned barrier algorithm N forced "
          "(--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_barrier_algorithm N): "
          "1 linear, 2 double ring, 3 recursive doubling, 4 Bruck, 5 two proc, 6 tree; "
          "5 exists for 2 ranks only, so it has no row at np 4 and 8. "
          f"Ranks are bound to cores; np above {cpus} runs more ranks than this machine's "
          f"{cpus} CPUs (oversubscribed), where every barrier waits for descheduled ranks.", ""]
    if mappings_equal:
        md += ["On this machine (one package, one NUMA node: topsync-info) map-by core, numa "
               "and socket place the ranks identically: the spread over the mappings (CV) is "
               "run-to-run variation, not the robustness the paper's Fig. 6 measures.", ""]
    configs = sorted({(r["mpi"], r["np"]) for r in rows})
    for mpi, np_ in configs:
        sub = [r for r in rows if r["mpi"] == mpi and r["np"] == np_]
        maps = [m for m in ("core", "numa", "socket") if any(r["mapping"] == m for r in sub)]
        algs = sorted({r["algorithm"] for r in sub},
                      key=lambda a: (a.startswith("peer:"), a))
        lat = {(r["algorithm"], r["mapping"]): r["latency_ns"] for r in sub}
        resolved = {r["algorithm"]: r["resolved"] for r in sub if r["resolved"]}
        where = (f"{np_} ranks on {cpus} CPUs: oversubscribed {np_ / cpus:g}x" if np_ > cpus
                 else f"{np_} ranks on {cpus} CPUs, one per core")
        md += [f"## {mpi}, np = {np_} ({where})", "",
               "| algorithm | " + " | ".join(f"map-by {m} (us)" for m in maps) +
               " | mean (us) | CV | vs peer:mpi |",
               "|---|" + "---:|" * (len(maps) + 3)]
        table = []
        for a in algs:
            vals = [lat.get((a, m)) for m in maps]
            present = [v for v in vals if v is not None]
            if not present:
                continue
            mean = statistics.mean(present)
            cv = statistics.pstdev(present) / mean if len(present) > 1 and mean > 0 else 0.0
            peer = [lat.get(("peer:mpi", m)) for m in maps]
            ratios = [v / p for v, p in zip(vals, peer) if v is not None and p]
            ratio = statistics.median(ratios) if ratios else float("nan")
            name = a + (f" ({resolved[a]})" if a in resolved and resolved[a] != a else "")
            md.append(f"| {name} | " + " | ".join("" if v is None else f"{v / 1000:.3f}" for v in vals) +
                      f" | {mean / 1000:.3f} | {cv * 100:.1f} % | {ratio:.4f}x |")
            table.append((name, vals, mean, cv))
        auto = [lat.get(("auto", m)) / lat.get(("peer:mpi", m)) for m in maps
                if lat.get(("auto", m)) and lat.get(("peer:mpi", m))]
        if auto:
            md += ["", f"Default (auto) / {mpi}'s own barrier, median over mappings: "
                       f"**{statistics.median(auto):.4f}x**"]
        md.append("")
        if plt is None:
            continue
        for m in maps:
            names = [a for a in algs if (a, m) in lat]
            vals = [lat[(a, m)] / 1000 for a in names]
            fig, ax = plt.subplots(figsize=(10, 4.5))
            colors = ["#d62728" if a.startswith("peer:") else "#1f77b4" for a in names]
            ax.bar(range(len(names)), vals, color=colors)
            ax.set_xticks(range(len(names)))
            ax.set_xticklabels(names, rotation=45, ha="right", fontsize=8)
            ax.set_ylabel("MPI_Barrier latency (us)")
            ax.set_yscale("log")
            ax.set_title(f"{mpi}, np = {np_} on {cpus} CPUs"
                         f"{' (oversubscribed)' if np_ > cpus else ''}, map-by {m} "
                         f"(blue: topsync, red: the MPI's own)", fontsize=9)
            fig.tight_layout()
            fig.savefig(os.path.join(out_dir, f"bar-{mpi}-np{np_}-{m}.png"), dpi=110)
            plt.close(fig)
        fig, ax = plt.subplots(figsize=(10, 0.35 * len(table) + 1.2))
        ax.axis("off")
        cells = [[n] + ["" if v is None else f"{v / 1000:.3f}" for v in vals] +
                 [f"{mean / 1000:.3f}", f"{cv * 100:.1f} %"] for n, vals, mean, cv in table]
        t = ax.table(cellText=cells, colLabels=["algorithm"] + [f"by {m} (us)" for m in maps] +
                     ["mean (us)", "CV"], loc="center")
        t.auto_set_font_size(False)
        t.set_fontsize(8)
        t.scale(1, 1.2)
        ax.set_title(f"{mpi}, np = {np_} on {cpus} CPUs: latency per mapping and coefficient of "
                     f"variation" + (" (the mappings place ranks identically here)"
                                     if mappings_equal else ""), fontsize=9)
        fig.tight_layout()
        fig.savefig(os.path.join(out_dir, f"fig6-{mpi}-np{np_}.png"), dpi=110)
        plt.close(fig)
    with open(os.path.join(out_dir, "summary.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "out/mpi"))
