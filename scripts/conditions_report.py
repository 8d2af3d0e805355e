#!/usr/bin/env python3
"""What scripts/conditions.sh measured: topsync's default (auto) against
glibc's barrier and libgomp's in the same command, at each participant
count and condition (bound and idle; unbound beside 0, P/4, P, 2P busy
processes), with reactive barriers on and off, and the pthread drop-in
against glibc. A Markdown table on stdout; with --plot, the same ratios
as a figure (one panel per kind: threads, processes), ratio 1 being
glibc's barrier.

usage: conditions_report.py DIR [--plot OUT.png TITLE]
DIR holds conditions.sh's JSON files, KIND-P-BIND-NOISE-REACTIVE.json.
"""
import glob
import json
import os
import sys


def load(directory):
    rows = {}
    for path in glob.glob(os.path.join(directory, "*.json")):
        reactive = path.rsplit("-", 1)[1][:-5]
        records = {r["algorithm"]: r for r in json.load(open(path))}
        auto = records.get("auto")
        if not auto:
            continue
        key = (auto["kind"] != "threads", auto["participants"], auto["bind"] == "none",
               auto["noise"])
        rows.setdefault(key, {})[reactive] = records
    return rows


def median(records, name):
    r = records.get(name) if records else None
    return r["median_ns"] if r and r["median_ns"] > 0 else float("nan")


def vs_glibc(records):
    """auto / glibc: the median of the runs' paired ratios when the
    benchmark paired them, else the medians' ratio"""
    if not records:
        return float("nan")
    paired = records["auto"].get("vs_pthread_paired")
    return paired if paired else median(records, "auto") / median(records, "peer:pthread")


def figure(x, digits=1):
    return "-" if x != x else f"{x:.{digits}f}"


def condition_name(auto, short=False):
    bind, noise = auto["bind"], auto["noise"]
    if short:
        return ("bound" if bind == "core" else "unbound") + (f"\n{noise} busy" if noise else "\nidle")
    return ("bound" if bind == "core" else "unbound") + ", " + (
        f"{noise} busy neighbour processes" if noise else "idle")


def table(rows):
    print("| participants | condition | auto ns (what ran) | glibc ns | libgomp ns "
          "| auto / glibc | auto / libgomp | reactive off: auto / glibc | drop-in / glibc |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for key in sorted(rows):
        on, off = rows[key].get("on"), rows[key].get("off")
        if not on:
            continue
        auto = on["auto"]
        what = auto.get("resolved", "?")
        if auto.get("switches"):
            what += f", {auto['switches']} switches"
        t, g, o = median(on, "auto"), median(on, "peer:pthread"), median(on, "peer:omp")
        pg, pp = median(on, "peer:pthread-program"), median(on, "preload:pthread-program")
        print(f"| {auto['participants']} {auto['kind']} | {condition_name(auto)} "
              f"| {t:.1f} ({what}) | {figure(g)} | {figure(o)} "
              f"| {figure(vs_glibc(on), 2)} | {figure(t / o, 2)} | {figure(vs_glibc(off), 2)} "
              f"| {figure(pp / pg, 2)} |")


def plot(rows, out, title):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    kinds = sorted({key[0] for key in rows})
    fig, axes = plt.subplots(len(kinds), 1, figsize=(11, 4.2 * len(kinds)), squeeze=False)
    series = [  # label, value of (on, off) records, style
        ("topsync auto / glibc", lambda on, off: vs_glibc(on), dict(marker="o", color="tab:blue")),
        ("reactive off: auto / glibc", lambda on, off: vs_glibc(off),
         dict(marker="s", color="tab:cyan", linestyle=":")),
        ("auto / libgomp", lambda on, off: median(on, "auto") / median(on, "peer:omp"),
         dict(marker="^", color="tab:red", linestyle="--")),
        ("pthread drop-in / glibc",
         lambda on, off: median(on, "preload:pthread-program") / median(on, "peer:pthread-program"),
         dict(marker="D", color="tab:green", linestyle="-.")),
    ]
    drawn = 0
    for axis, processes in zip(axes[:, 0], kinds):
        keys = [k for k in sorted(rows) if k[0] == processes and rows[k].get("on")]
        counts = sorted({k[1] for k in keys})
        x, ticks, labels = 0, [], []
        positions = {}
        for n in counts:
            for k in (k for k in keys if k[1] == n):
                positions[k] = x
                ticks.append(x)
                labels.append(f"P={n}\n" + condition_name(rows[k]["on"]["auto"], short=True))
                x += 1
            x += 0.8  # a gap between participant counts
        for label, value, style in series:
            first = True
            for n in counts:
                group = [k for k in keys if k[1] == n]
                xs = [positions[k] for k in group]
                ys = [value(rows[k].get("on"), rows[k].get("off")) for k in group]
                if all(y != y for y in ys):
                    continue
                axis.plot(xs, ys, label=label if first else None, markersize=6, linewidth=1.4,
                          **style)
                first = False
                drawn += 1
        axis.axhline(1.0, color="black", linewidth=1, alpha=0.6)
        axis.text(-0.45, 1.0, "1: as fast as the peer", va="bottom", ha="left", fontsize=8)
        axis.set_yscale("log")
        axis.set_xlim(-0.5, (ticks[-1] if ticks else 0) + 0.5)
        axis.set_xticks(ticks)
        axis.set_xticklabels(labels, fontsize=7)
        axis.set_ylabel("ratio (below 1: topsync faster)")
        axis.set_title("processes (forked; peer: glibc's process-shared barrier)" if processes
                       else "threads", fontsize=10)
        axis.grid(True, which="both", axis="y", alpha=0.3)
        axis.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=120, bbox_inches="tight")
    print(f"conditions_report.py: wrote {out} ({len(kinds)} panels, {drawn} lines)",
          file=sys.stderr)


def main(argv):
    if len(argv) not in (2, 5) or (len(argv) == 5 and argv[2] != "--plot"):
        sys.exit(__doc__)
    rows = load(argv[1])
    if not rows:
        sys.exit(f"conditions_report.py: no conditions.sh records in {argv[1]}")
    table(rows)
    if len(argv) == 5:
        plot(rows, argv[3], argv[4])


if __name__ == "__main__":
    main(sys.argv)
