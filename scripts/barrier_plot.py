#!/usr/bin/env python3
"""Barrier latency against participants, log-log, one line per algorithm
and per peer (glibc's pthread barrier, OpenMP, Concurrency Kit, and each
MPI's own MPI_Barrier among as many ranks), from topsync-bench barrier
--output JSON files (threads, or --mpi --algorithm none under an MPI's
launcher): the paper's own kind of figure (Kurnosov 2022, Fig. 5-7), for
the machine the files were measured on.

usage: barrier_plot.py OUT.png TITLE FILE.json...
Each file holds one participant count; the plot's title says the
conditions (machine, binding, what else ran), which the caller knows.
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


MPI_NAMES = {"openmpi": "Open MPI", "mpich": "MPICH"}


def main(argv):
    if len(argv) < 4:
        sys.exit(__doc__)
    out, title, files = argv[1], argv[2], argv[3:]
    series = {}
    for path in files:
        for r in json.load(open(path)):
            if not r.get("latency_ns") or r.get("noise"):
                continue
            if r.get("mpi") and r["algorithm"] == "peer:mpi":
                name = "peer:MPI_Barrier (%s, ranks)" % MPI_NAMES.get(r["mpi"], r["mpi"])
            elif r.get("kind") == "threads":
                name = r["algorithm"]
            else:
                continue
            series.setdefault(name, {})[r["participants"]] = r["latency_ns"] / 1000.0
    if not series:
        sys.exit("barrier_plot.py: no thread or MPI records in %s" % " ".join(files))
    fig, ax = plt.subplots(figsize=(8, 5.5))
    markers = ["o", "s", "^", "v", "D", "P", "X", "*", "h", "<", ">", "p"]
    colors = plt.get_cmap("tab20").colors  # 20 distinct: no two lines alike
    for k, (name, points) in enumerate(sorted(series.items(), key=lambda kv: kv[0])):
        xs = sorted(points)
        peer = not name[0].isalpha() or ":" in name  # peer:..., preload:...
        ax.plot(xs, [points[x] for x in xs], marker=markers[k % len(markers)], label=name,
                color=colors[k % len(colors)], linewidth=2.4 if peer else 1.3,
                linestyle="--" if peer else "-", markersize=5, alpha=0.95)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    counts = sorted({x for p in series.values() for x in p})
    ax.set_xticks(counts)
    ax.set_xticklabels([str(c) for c in counts])
    ax.set_xlabel("participants (threads; MPI: ranks)")
    ax.set_ylabel("latency per barrier (us, mean of runs)")
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    # the legend beside the axes: it hides no line
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    fig.tight_layout()
    fig.savefig(out, dpi=120, bbox_inches="tight")
    print("barrier_plot.py: wrote %s (%d series, participants %s)"
          % (out, len(series), ", ".join(map(str, counts))))


if __name__ == "__main__":
    main(sys.argv)
