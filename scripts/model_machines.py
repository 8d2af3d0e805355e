#!/usr/bin/env python3
"""The machines of data/c2c for the model (docs/model.md): each table's
hwloc topology with the table's own CPU numbering, and the few figures the
model takes from outside a table, each computed here from its source.

Used by scripts/model_defaults.py and scripts/model_validate.py; run it to
print the machines and the derived figures.
"""
import csv
import os
import re
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
C2C = os.path.join(ROOT, "data", "c2c")
KUNPENG_XML = os.path.join(ROOT, "tests", "topologies", "machines",
                           "linux-128arm-2pa2n8cluster4co.xml")


def smt_indexes(cores, per_core_offset):
    """PU OS indexes of `cores` 2-thread cores where core c holds PUs c and
    c + per_core_offset (Linux numbering: every core's first thread, then
    every core's second thread)."""
    return ",".join(f"{c},{c + per_core_offset}" for c in range(cores))


def load_table(path):
    """The full symmetric matrix of a lower-triangle CSV (ns)."""
    with open(path) as f:
        rows = list(csv.reader(f))
    n = len(rows)
    m = [[0.0] * n for _ in range(n)]
    for i, row in enumerate(rows):
        for j in range(i):
            m[i][j] = m[j][i] = float(row[j])
    return m


def write_table(path, m):
    with open(path, "w") as f:
        for i in range(len(m)):
            f.write(",".join(f"{m[i][j]:.6f}" if j < i else "" for j in range(len(m))) + "\n")


# Each machine: its table, the topology of the whole machine (what the
# forward predictions run on), the topology of what the table covers when
# that is one package (what `topsync-sim levels` classes its pairs on), and
# its cores' memory-level parallelism: "mlp", the outstanding L1D misses the
# vendor documents for the core (fill buffers, miss address buffers), with
# "mlp_source" naming the document; None where no vendor figure was found,
# and the predictions are then ranges over K (docs/model.md section 4).
# None was found for any of the four: searched 2026-11 for the Intel 64
# and IA-32 Optimization Reference Manual's Skylake-SP fill buffers, AMD's
# Software Optimization Guide for Family 17h (Zen 2) miss address buffers,
# Arm's Neoverse N1 Software Optimization Guide, and HiSilicon's TSV110; the
# only figure met (10 fill buffers, Nehalem to Haswell) is a forum's, for
# other cores. A figure is never taken from agreement with the paper.
NOT_FOUND = "no vendor figure found"
MACHINES = {
    "kunpeng920": {
        "name": "2 x HiSilicon Kunpeng 920-6426 (the paper's server)",
        "c2c": os.path.join(C2C, "hisilicon-kunpeng-920-6426.csv"),
        "topology": "pack:2 numa:2 l3:1 core:32 pu:1",
        "table_topology": "pack:1 numa:2 l3:1 core:32 pu:1",
        "mlp": None,
        "mlp_source": NOT_FOUND,
    },
    "epyc7742": {
        "name": "2 x AMD EPYC 7742 (NPS1)",
        "c2c": os.path.join(C2C, "dual-amd-epyc-7742-64-core-processor.csv"),
        "topology": "pack:2 numa:1 l3:16 core:4 pu:2(indexes=%s)" % smt_indexes(128, 128),
        # socket 1's block, renumbered (see epyc_package_table)
        "table_topology": "pack:1 numa:1 l3:16 core:4 pu:2(indexes=%s)" % smt_indexes(64, 64),
        "mlp": None,
        "mlp_source": NOT_FOUND,
    },
    "xeon6242": {
        "name": "2 x Intel Xeon Gold 6242",
        "c2c": os.path.join(C2C, "dual-intel-xeon-gold-6242.csv"),
        "topology": "pack:2 numa:1 l3:1 core:16 pu:2(indexes=%s)" % smt_indexes(32, 32),
        "table_topology": "pack:2 numa:1 l3:1 core:16 pu:2(indexes=%s)" % smt_indexes(32, 32),
        "mlp": None,
        "mlp_source": NOT_FOUND,
    },
    "graviton2": {
        "name": "AWS Graviton2",
        "c2c": os.path.join(C2C, "aws-graviton2.csv"),
        "topology": "pack:1 numa:1 l3:1 core:64 pu:1",
        "table_topology": "pack:1 numa:1 l3:1 core:64 pu:1",
        "mlp": None,
        "mlp_source": NOT_FOUND,
    },
}


def epyc_package_table(out_dir):
    """The EPYC 7742 table as topsync's barriers see it: one package (socket 1's
    block) and the cross-socket median.

    In the measured table, pairs of CCXs inside socket 0 cost as much as pairs
    across the sockets (median 267 ns), while inside socket 1 they cost 132 ns:
    the measuring tool's line was homed on socket 1, and AMD's coherence goes
    through the line's home. topsync first-touches every flag on its writer's
    node, so a flag between two cores of one socket is homed on that socket:
    socket 1's block is what both sockets cost. Socket 1 holds cores 64..127
    (CPUs 64..127, siblings 192..255); renumbered 0..63 and 64..127.
    Returns (path of the one-package CSV, cross-package ns).
    """
    m = load_table(MACHINES["epyc7742"]["c2c"])
    cpus = list(range(64, 128)) + list(range(192, 256))
    block = [[m[a][b] for b in cpus] for a in cpus]
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "epyc7742-socket1.csv")
    write_table(path, block)
    socket = lambda c: (c % 128) // 64
    cross = statistics.median(m[a][b] for a in range(256) for b in range(256)
                              if socket(a) != socket(b))
    return path, cross


def epyc_socket_medians():
    """Median cross-CCX latency inside each socket of the measured EPYC table."""
    m = load_table(MACHINES["epyc7742"]["c2c"])
    ccx = lambda c: (c % 128) // 4
    out = []
    for s in (0, 1):
        cpus = [c for c in range(256) if (c % 128) // 64 == s]
        out.append(statistics.median(m[a][b] for a in cpus for b in cpus if ccx(a) != ccx(b)))
    return out


def kunpeng_slit():
    """The ACPI SLIT of a real dual Kunpeng 920 (hwloc's NUMALatency matrix in
    its XML): (mean distance between dies of one package, mean distance
    between packages). Nodes 0,1 are package 0 and 2,3 package 1."""
    with open(KUNPENG_XML) as f:
        text = f.read()
    block = re.search(r'<distances2 type="NUMANode" nbobjs="4"[^>]*name="NUMALatency"[^>]*>'
                      r'(.*?)</distances2>', text, re.S).group(1)
    values = [int(v) for chunk in re.findall(r"<u64values[^>]*>([^<]*)</u64values>", block)
              for v in chunk.split()]
    d = [values[4 * i:4 * i + 4] for i in range(4)]
    package = lambda node: node // 2
    same = [d[i][j] for i in range(4) for j in range(4) if i != j and package(i) == package(j)]
    cross = [d[i][j] for i in range(4) for j in range(4) if package(i) != package(j)]
    return statistics.mean(same), statistics.mean(cross)


def kunpeng_cross_package_ns():
    """docs/model.md, "Cross-package latency": the Kunpeng table's mean
    cross-die latency scaled by the SLIT ratio of packages to dies."""
    m = load_table(MACHINES["kunpeng920"]["c2c"])
    cross_die = statistics.mean(m[a][b] for a in range(32) for b in range(32, 64))
    same, cross = kunpeng_slit()
    return cross_die, same, cross, cross_die * cross / same


# The home's service time (docs/model.md, section 4, issue 36). No figure for
# the Kunpeng 920's home agents was found, and this 2-CPU machine cannot
# make several cores miss on one home; what it can measure is how fast one
# core's misses on lines just written by another complete when they overlap:
# `topsync-bench c2c --mlp` (64 lines, 1000 rounds of each kind), on this
# project's AMD EPYC VM on 2026-11-25, five runs: dependent 29.42 ns per
# line in all five, independent 2.19-2.34 ns, K = 12.6-13.5 (median 13.45);
# earlier runs the same day, with the vCPUs on farther host cores (126 ns),
# gave K = 13.6-14.7. The home served a line at least every T / K then, so
# T / K is an upper bound on its service time, here taken for the Kunpeng's
# home as its own die's median latency over that K. Derived from the
# measurement alone: while the mechanism was built, Fig. 4 was simulated at
# 2, 10 and 35.7 ns to see it act, and this value was not chosen from them.
MEASURED_MISS_OVERLAP_K = 13.45


def kunpeng_home_service_ns():
    """The Kunpeng's intra-die median latency / the overlap measured here."""
    m = load_table(MACHINES["kunpeng920"]["c2c"])
    same_die = statistics.median(m[a][b] for a in range(32) for b in range(a))
    return same_die / MEASURED_MISS_OVERLAP_K


def main():
    for key, mach in MACHINES.items():
        print(f"{key}: {mach['name']}\n  c2c: {os.path.relpath(mach['c2c'], ROOT)}\n"
              f"  topology: {mach['topology'][:70]}{'...' if len(mach['topology']) > 70 else ''}")
    die, same, cross, ns = kunpeng_cross_package_ns()
    print(f"\nKunpeng cross-package latency: mean cross-die {die:.2f} ns x SLIT {cross:.2f} / "
          f"{same:.2f} = {ns:.1f} ns")
    print(f"Kunpeng home service time: {kunpeng_home_service_ns():.2f} ns (intra-die median / "
          f"K {MEASURED_MISS_OVERLAP_K} measured here)")
    s0, s1 = epyc_socket_medians()
    print(f"EPYC 7742 measured cross-CCX medians: socket 0 {s0:.1f} ns, socket 1 {s1:.1f} ns")
    return 0


if __name__ == "__main__":
    sys.exit(main())
