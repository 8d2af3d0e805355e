#!/usr/bin/env python3
"""The per-level latencies of a derived table (docs/model.md, "Derived
tables"), computed from the measured tables of data/c2c.

For each table, `topsync-sim levels` classes every pair of CPUs by the
closest level they share on that table's topology and gives the median of
each level; the default of a level is the median of those medians over
the tables that have the level (L2: no table has two cores under one L2,
so it takes L3's figure).

usage: model_defaults.py TOPSYNC_SIM [--check]
  --check: exit 1 unless the defaults compiled into topsync (as
           `topsync-sim levels --json` reports them) are these, to 0.05 ns.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_machines  # noqa: E402

LEVELS = ["core", "l2", "l3", "numa", "package", "machine"]


def levels_of(sim, topology, c2c):
    out = subprocess.run([sim, "levels", "--topology", topology, "--c2c", c2c, "--json"],
                         check=True, capture_output=True, text=True).stdout
    doc = json.loads(out)
    return {row["level"]: row for row in doc["levels"]}, doc["defaults"]


def compute(sim, tmp):
    per_level = {level: [] for level in LEVELS}
    compiled = None
    for key, mach in model_machines.MACHINES.items():
        c2c = mach["c2c"]
        if key == "epyc7742":
            # socket 1's block, and the measured cross-socket median
            c2c, cross = model_machines.epyc_package_table(tmp)
            per_level["machine"].append((key, cross, 128 * 128))
        rows, compiled = levels_of(sim, mach["table_topology"], c2c)
        for level, row in rows.items():
            per_level[level].append((key, row["median_ns"], row["pairs"]))
    defaults = {}
    for level in LEVELS:
        figures = per_level[level]
        if figures:
            defaults[level] = statistics.median(f[1] for f in figures)
    defaults["l2"] = defaults["l3"]
    return per_level, defaults, compiled


def main(argv):
    if not argv:
        print(__doc__)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        per_level, defaults, compiled = compute(argv[0], tmp)
    print("| level | default ns | from (table: median ns, pairs) |")
    print("|---|---:|---|")
    for level in LEVELS:
        src = ", ".join(f"{k}: {m:.1f} ({p})" for k, m, p in per_level[level]) or "= l3"
        print(f"| {level} | {defaults[level]:.1f} | {src} |")
    if "--check" in argv[1:]:
        bad = [level for level in LEVELS if abs(compiled[level] - defaults[level]) > 0.05]
        for level in bad:
            print(f"FAIL: compiled default of {level} is {compiled[level]:.3f} ns, the tables "
                  f"give {defaults[level]:.3f} ns", file=sys.stderr)
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
