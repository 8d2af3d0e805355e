#!/usr/bin/env python3
"""Check the machine model (docs/model.md) and make its forward predictions.

usage: model_validate.py BUILD_DIR [--out DIR] [--seeds K] [--reps R]
                         [--skip-this-machine] [--update-docs | --check-docs]

1. This machine: R times (default 5), measure the core-to-core table
   (topsync-bench c2c) and right after it the 2-thread barrier latency of
   every algorithm (topsync-bench barrier --wait spin), then predict the same
   with topsync-sim on that table; per algorithm the ratio predicted /
   measured, per repetition Spearman's rank correlation.
2. The paper's Fig. 4: 64 processes on one Kunpeng 920-6426 (map-by core on
   the paper's server), the 7 shared-memory algorithms.
3. The paper's Fig. 6: 128 processes on two, 10 algorithms x 3 mappings;
   across packages the documented assumption (TOPSYNC_MODEL_CROSS_PACKAGE_NS,
   docs/model.md section 2), never a fitted figure.
   Parts 2 and 3 run at every memory-level parallelism K of MLP_RANGE (the
   TSV110 core's is not documented), and a table puts both figures side by
   side per K, so that a gain on one cannot hide a loss on the other.
4. Forward: the same 10 algorithms (and topsync's default topo forms) on the
   dual EPYC 7742, dual Xeon Gold 6242 and Graviton2, every core, each
   mapping; a table and docs/model-forward.png. A machine whose vendor
   documents its cores' outstanding L1D misses is predicted at that K
   (model_machines.MACHINES[...]["mlp"], with its source); the others as
   the range over MLP_RANGE.

Each prediction is the median over K seeds (default 5) of 1000 episodes.
The report goes to OUT/validation.md (default out/model); --update-docs
writes it into docs/model.md between its markers, and the PNGs to docs/.
Parts 2-4 are deterministic (same code, same tables, same seeds): with
--check-docs the script fails unless docs/model.md shows exactly what it
computed now, so that the document follows every change to an algorithm
or to the model (test model.sim_paper). Part 1 and the timings are
measurements of the machine that runs the script, in blocks of their own.
"""
import concurrent.futures
import json
import math
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_machines  # noqa: E402

ROOT = model_machines.ROOT

# Published times, us (Kurnosov 2022; the seed text's Fig. 4 labels and the
# Fig. 6 table). Fig. 4 also has Open MPI's send/recv algorithms, which are
# not topsync's and are not predicted.
FIG4 = {
    "sense-reversing": 20.19, "sense-reversing-counter": 3.45, "sense-reversing-gr": 3.31,
    "combining-tree": 1.87, "mcs": 2.90, "tournament": 2.61, "dissemination": 3.18,
}
FIG6 = {  # algorithm: (map-by core, numa, socket)
    "sense-reversing": (50.35, 45.55, 52.8),
    "sense-reversing-counter": (4.41, 5.1, 4.64),
    "sense-reversing-gr": (6.80, 7.18, 6.98),
    "combining-tree": (3.09, 3.92, 3.63),
    "mcs": (3.31, 5.47, 4.9),
    "tournament": (3.83, 3.59, 7.38),
    "dissemination": (4.37, 3.45, 3.85),
    "topo:numa,socket/global": (3.25, 2.86, 3.16),
    "topo:numa/global": (2.98, 2.68, 3.03),
    "topo:socket/global": (3.69, 3.34, 3.16),
}
PAPER_NAME = {"topo:numa,socket/global": "topo-NUMA-SOCKET", "topo:numa/global": "topo-NUMA",
              "topo:socket/global": "topo-SOCKET"}
MAPPINGS = ("core", "numa", "socket")
# TOPSYNC_MODEL_MLP_RANGE (include/topsync/model.h): the Ks of a core whose
# outstanding misses are not documented
MLP_RANGE = (1, 2, 4, 8, 16)
FORWARD_EXTRA = ["topo", "topo/tree"]  # topsync's default form: every active level


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


def ranks(values):
    """Average ranks (1-based), ties shared."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    r = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return r


def spearman(a, b):
    ra, rb = ranks(a), ranks(b)
    ma, mb = statistics.mean(ra), statistics.mean(rb)
    num = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    den = math.sqrt(sum((x - ma) ** 2 for x in ra) * sum((y - mb) ** 2 for y in rb))
    return num / den if den else float("nan")


def worst(ratios):
    """The ratio farthest from 1 (either way)."""
    return max(ratios, key=lambda r: abs(math.log(r)))


class Sim:
    def __init__(self, build, seeds):
        self.exe = os.path.join(build, "tools", "topsync-sim")
        self.seeds = seeds
        self.seconds = []
        # one simulation per CPU at a time: the simulator is single-threaded
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1)

    def predict(self, machine_args, np, map_by, algorithms, wait="spin", mlp=1):
        """{algorithm: (median latency ns over the seeds, resolved)} at K = mlp"""
        return self.sweep(machine_args, np, map_by, algorithms, (mlp,), wait)[mlp]

    def sweep(self, machine_args, np, map_by, algorithms, ks=MLP_RANGE, wait="spin"):
        """{K: predict(...) at K} for every K of ks, all seeds of all Ks at once"""
        jobs = []
        for k in ks:
            for seed in range(1, self.seeds + 1):
                cmd = [self.exe, "barrier", *machine_args, "--np", str(np), "--map-by", map_by,
                       "--seed", str(seed), "--wait", wait, "--mlp", str(k), "--json"]
                for a in algorithms:
                    cmd += ["--algorithm", a]
                jobs.append((k, cmd))
        per = {k: {a: [] for a in algorithms} for k in ks}
        resolved = {}
        for (k, _), out in zip(jobs, self.pool.map(run, [cmd for _, cmd in jobs])):
            for rec in json.loads(out):
                per[k][rec["algorithm"]].append(rec["latency_ns"])
                resolved[rec["algorithm"]] = rec["resolved"]
                self.seconds.append((np, rec["sim_seconds"]))
        return {k: {a: (statistics.median(v), resolved[a]) for a, v in per[k].items()}
                for k in ks}


def kunpeng_args(home=False):
    """The paper's server; home: with the home's service time (model_machines)"""
    m = model_machines.MACHINES["kunpeng920"]
    extra = ["--home-service-ns", f"{model_machines.kunpeng_home_service_ns():.3f}"] if home else []
    return ["--topology", m["topology"], "--c2c", m["c2c"], *extra]


def this_machine(build, out, sim, reps):
    bench = os.path.join(build, "bench", "topsync-bench")
    rows = []  # per rep: {alg: (pred, meas)}
    overlaps = []  # per rep: (K measured, ns per independent miss, predictions it changed)
    for rep in range(reps):
        table = os.path.join(out, f"this-machine-c2c-{rep}.csv")
        run([bench, "c2c", "--output", table])
        # auto as the model chooses it here, not from a tuning file
        measured = json.loads(run([bench, "barrier", "--threads", "2", "--wait", "spin",
                                   "--peers", "none", "--json"],
                                  env=dict(os.environ, TOPSYNC_TUNING="off")))
        with open(table) as f:
            t_ns = float(f.read().splitlines()[1].split(",")[0])
        meas = {r["algorithm"]: r["latency_ns"] for r in measured if r["latency_ns"] > 0}
        pred = sim.predict(["--c2c", table], 2, "core", list(meas))
        # this machine's miss overlap K and home (topsync-bench c2c --mlp),
        # predicted with them too: the model topsync-tune gives auto here
        mlp = json.loads(run([bench, "c2c", "--mlp"]))
        k_here = max(1, min(64, round(mlp["mlp"])))
        pred_k = sim.predict(["--c2c", table, "--home-service-ns",
                              f"{mlp['independent_ns_per_line']:.3f}"], 2, "core", list(meas),
                             mlp=k_here)
        overlaps.append((mlp["mlp"], mlp["independent_ns_per_line"],
                         sum(pred_k[a][0] != pred[a][0] for a in meas)))
        rows.append((t_ns, {a: (pred[a][0], meas[a]) for a in meas}))
    lines = ["### 1. This machine (2 cores), predicted against measured\n",
             "Each repetition measures the table (one figure, T) and then the 2-thread "
             "barrier (`topsync-bench barrier --threads 2 --wait spin`, median protocol "
             "of 5 runs); the prediction uses that repetition's table. The VM's two vCPUs "
             "move between host cores, so T changes between repetitions.\n",
             "| rep | T ns | " + " | ".join(rows[0][1]) + " | Spearman |",
             "|---|---:|" + "---:|" * len(rows[0][1]) + "---:|"]
    ratios_by_alg = {a: [] for a in rows[0][1]}
    rhos = []
    for k, (t_ns, r) in enumerate(rows):
        algs = list(r)
        rho = spearman([r[a][0] for a in algs], [r[a][1] for a in algs])
        rhos.append(rho)
        cells = []
        for a in algs:
            p, m = r[a]
            ratios_by_alg[a].append(p / m)
            cells.append(f"{p:.0f} / {m:.0f}")
        lines.append(f"| {k + 1} | {t_ns:.1f} | " + " | ".join(cells) + f" | {rho:.2f} |")
    all_ratios = [x for v in ratios_by_alg.values() for x in v]
    lines += ["", "Cells: predicted / measured ns.", "",
              f"- median ratio predicted / measured: {statistics.median(all_ratios):.2f} "
              f"(per algorithm: " + ", ".join(f"{a} {statistics.median(v):.2f}"
                                               for a, v in ratios_by_alg.items()) + ")",
              f"- Spearman per repetition: " + ", ".join(f"{x:.2f}" for x in rhos) +
              f" (median {statistics.median(rhos):.2f})",
              "- miss overlap measured here (`topsync-bench c2c --mlp`, right after each "
              "barrier run): K = " + ", ".join(f"{k:.1f}" for k, _, _ in overlaps) +
              ", one independent miss per " + ", ".join(f"{i:.2f}" for _, i, _ in overlaps) +
              " ns. Predicted again at that K (rounded) with a home serving one request per "
              "that interval, the cells above change in " +
              ", ".join(str(c) for _, _, c in overlaps) + " of " + str(len(rows[0][1])) +
              " algorithms per repetition" +
              (": with 2 participants nobody waits for more than one word, so there is "
               "nothing for K to overlap and no burst for a home to serve, and the K = 1 "
               "predictions stand against the measurement as they are."
               if not any(c for _, _, c in overlaps) else "."),
              ""]
    return "\n".join(lines), {"ratios": ratios_by_alg, "spearman": rhos,
                              "overlap": overlaps}


def fmt_range(values, digits=2):
    """"lo-hi" of the values (one figure when they agree at that precision)"""
    lo, hi = f"{min(values):.{digits}f}", f"{max(values):.{digits}f}"
    return lo if lo == hi else f"{lo}-{hi}"


def fig4(sim, home=False):
    algs = list(FIG4)
    sweep = sim.sweep(kunpeng_args(home), 64, "core", algs)
    q = [FIG4[a] for a in algs]
    per_k = {}
    for k, pred in sweep.items():
        p = [pred[a][0] / 1000 for a in algs]
        ratios = [x / y for x, y in zip(p, q)]
        per_k[k] = {"spearman": spearman(p, q), "median": statistics.median(ratios),
                    "worst": worst(ratios), "pred": dict(zip(algs, p)),
                    "fastest": min(algs, key=lambda a: pred[a][0])}
    lines = ["### 2. Fig. 4: 64 processes on one Kunpeng 920-6426\n",
             "Predicted us at each memory-level parallelism K (section 4); the TSV110 "
             "core's is not documented, so no K is the machine's.\n",
             "| algorithm | " + " | ".join(f"K={k}" for k in MLP_RANGE) +
             " | published us | published rank |",
             "|---|" + "---:|" * (len(MLP_RANGE) + 2)]
    rq = ranks(q)
    for i, a in enumerate(algs):
        lines.append(f"| {a} | " + " | ".join(f"{per_k[k]['pred'][a]:.2f}" for k in MLP_RANGE) +
                     f" | {q[i]:.2f} | {rq[i]:g} |")
    lines += ["", "| K | Spearman | median ratio predicted / published | worst |",
              "|---:|---:|---:|---:|"]
    for k in MLP_RANGE:
        r = per_k[k]
        lines.append(f"| {k} | {r['spearman']:.2f} | {r['median']:.2f} | {r['worst']:.2f} |")
    lines.append("")
    return "\n".join(lines), per_k


def fig6(sim, home=False):
    algs = list(FIG6)
    sweeps = {m: sim.sweep(kunpeng_args(home), 128, m, algs) for m in MAPPINGS}
    per_k = {}
    for k in MLP_RANGE:
        p_all, q_all = [], []
        for a in algs:
            for i, m in enumerate(MAPPINGS):
                p_all.append(sweeps[m][k][a][0] / 1000)
                q_all.append(FIG6[a][i])
        ratios = [x / y for x, y in zip(p_all, q_all)]
        per_k[k] = {
            "spearman": spearman(p_all, q_all),
            "per_mapping": {m: spearman([sweeps[m][k][a][0] for a in algs],
                                        [FIG6[a][i] for a in algs])
                            for i, m in enumerate(MAPPINGS)},
            "median": statistics.median(ratios), "worst": worst(ratios),
            "fastest": {m: min(algs, key=lambda a: sweeps[m][k][a][0]) for m in MAPPINGS}}
    lines = ["### 3. Fig. 6: 128 processes on two Kunpeng 920-6426\n",
             f"Across packages: {150.5} ns (section 2, fixed before this comparison). Cells: "
             f"predicted us over K = {', '.join(map(str, MLP_RANGE))} (lowest-highest) / "
             "published us.\n",
             "| algorithm | core: pred / pub | numa: pred / pub | socket: pred / pub |",
             "|---|---:|---:|---:|"]
    for a in algs:
        cells = [f"{fmt_range([sweeps[m][k][a][0] / 1000 for k in MLP_RANGE])} / "
                 f"{FIG6[a][i]:.2f}" for i, m in enumerate(MAPPINGS)]
        lines.append(f"| {PAPER_NAME.get(a, a)} | " + " | ".join(cells) + " |")
    lines += ["", "| K | Spearman (core / numa / socket) | median ratio | worst | "
                  "predicted fastest (core / numa / socket) |", "|---:|---:|---:|---:|---|"]
    for k in MLP_RANGE:
        r = per_k[k]
        lines.append(f"| {k} | {r['spearman']:.2f} (" +
                     " / ".join(f"{r['per_mapping'][m]:.2f}" for m in MAPPINGS) +
                     f") | {r['median']:.2f} | {r['worst']:.2f} | " +
                     " / ".join(PAPER_NAME.get(r["fastest"][m], r["fastest"][m])
                                for m in MAPPINGS) + " |")
    lines += ["", "Published fastest: topo-NUMA under every mapping.", ""]
    pred = {k: {m: sweeps[m][k] for m in MAPPINGS} for k in MLP_RANGE}
    return "\n".join(lines), per_k, pred


# The rules' choice on the paper's server: topo at every active level
RULES_TOPO = "topo:numa,socket/global"
ERROR_HEADER = os.path.join(ROOT, "src", "select", "model_error.h")


def ratio_error(f4, f6_pred):
    """The model's worst error on the ratio of two barriers' latencies, the
    figure auto's model step must beat before it overrules the rules
    (src/select/auto.c): max over K, mapping and algorithm a of
    max(e, 1/e), e = (predicted a / predicted ref) / (published a /
    published ref). ref: on Fig. 6 the rules' choice there (topo at every
    level); Fig. 4 publishes no topo, so there ref is its published fastest
    (combining-tree). Returns (error, where)."""
    worst_e, where = 1.0, ""

    def consider(p_a, p_ref, q_a, q_ref, what):
        nonlocal worst_e, where
        e = (p_a / p_ref) / (q_a / q_ref)
        e = max(e, 1 / e)
        if e > worst_e:
            worst_e, where = e, what
    for k in MLP_RANGE:
        for i, m in enumerate(MAPPINGS):
            pred = f6_pred[k][m]
            for a in FIG6:
                if a != RULES_TOPO:
                    consider(pred[a][0], pred[RULES_TOPO][0], FIG6[a][i], FIG6[RULES_TOPO][i],
                             f"Fig. 6 map-by {m}, K={k}: {PAPER_NAME.get(a, a)} / topo-NUMA-SOCKET")
        ref4 = min(FIG4, key=FIG4.get)
        for a in FIG4:
            if a != ref4:
                consider(f4[k]["pred"][a], f4[k]["pred"][ref4], FIG4[a], FIG4[ref4],
                         f"Fig. 4, K={k}: {a} / {ref4}")
    return worst_e, where


def error_header(error, where):
    return ("/* Generated by scripts/model_validate.py --update-docs; model.sim_paper\n"
            " * checks it. The machine model's worst error on the ratio of two\n"
            " * barriers' latencies over the barrier paper's Fig. 4 and Fig. 6 at every\n"
            " * memory-level parallelism K (docs/model.md, \"The model's error on a\n"
            f" * ratio\"): {error:.2f}x, at {where}.\n"
            " * auto's model step overrules the rules only by a predicted margin\n"
            " * beyond it (src/select/auto.c). */\n"
            "#ifndef TOPSYNC_SELECT_MODEL_ERROR_H\n#define TOPSYNC_SELECT_MODEL_ERROR_H\n"
            f"#define TS_MODEL_RATIO_ERROR {error:.2f}\n#endif\n")


def side_by_side(f4, f6, title="### Both figures at each K\n"):
    """Both figures per K in one table: a K that helps one and hurts the other shows."""
    lines = [title,
             "| K | Fig. 4 Spearman | Fig. 4 median ratio | Fig. 6 Spearman (core/numa/socket) "
             "| Fig. 6 median ratio | fastest in Fig. 6 (core/numa/socket) |",
             "|---:|---:|---:|---|---:|---|"]
    for k in MLP_RANGE:
        a, b = f4[k], f6[k]
        lines.append(f"| {k} | {a['spearman']:.2f} | {a['median']:.2f} | {b['spearman']:.2f} (" +
                     "/".join(f"{b['per_mapping'][m]:.2f}" for m in MAPPINGS) +
                     f") | {b['median']:.2f} | " +
                     " / ".join(PAPER_NAME.get(b["fastest"][m], b["fastest"][m])
                                for m in MAPPINGS) + " |")
    lines += ["", "Published: Fig. 4 ranks the combining tree first; Fig. 6 topo-NUMA first "
                  "under every mapping. No K is chosen from this table (section 7).", ""]
    return "\n".join(lines)


def forward(sim, out):
    epyc_csv, epyc_cross = model_machines.epyc_package_table(out)
    machines = {
        "epyc7742": ["--topology", model_machines.MACHINES["epyc7742"]["topology"],
                     "--c2c", epyc_csv, "--cross-package-ns", f"{epyc_cross:.3f}"],
        "xeon6242": ["--topology", model_machines.MACHINES["xeon6242"]["topology"],
                     "--c2c", model_machines.MACHINES["xeon6242"]["c2c"]],
        "graviton2": ["--topology", model_machines.MACHINES["graviton2"]["topology"],
                      "--c2c", model_machines.MACHINES["graviton2"]["c2c"]],
    }
    cores = {"epyc7742": 128, "xeon6242": 32, "graviton2": 64}
    algs = list(FIG6) + FORWARD_EXTRA
    results = {}
    lines = ["### 4. Forward predictions (no published data)\n",
             "Every core busy (one participant per core), us, median of the seeds. EPYC: "
             "socket 1's block per package and the measured cross-socket median "
             f"({epyc_cross:.1f} ns) between them (section 1). A cell is the range over "
             "the memory-level parallelism K the machine's cores may have: its vendor's "
             "figure where one is documented, else K = "
             f"{', '.join(map(str, MLP_RANGE))}.\n"]
    for key, args in machines.items():
        machine = model_machines.MACHINES[key]
        ks = (machine["mlp"],) if machine.get("mlp") else MLP_RANGE
        res = {m: sim.sweep(args, cores[key], m, algs, ks) for m in MAPPINGS}
        results[key] = {m: {str(k): v for k, v in res[m].items()} for m in MAPPINGS}
        source = (f"K = {machine['mlp']} ({machine['mlp_source']})" if machine.get("mlp")
                  else f"K not documented for this core ({machine['mlp_source']}): "
                       f"K = {ks[0]}-{ks[-1]}")
        lines += [f"**{machine['name']}**, {cores[key]} participants; {source}\n",
                  "| algorithm | resolved (map-by core) | core | numa | socket |",
                  "|---|---|---:|---:|---:|"]
        for a in algs:
            lines.append(f"| {PAPER_NAME.get(a, a)} | {res['core'][ks[0]][a][1]} | " +
                         " | ".join(fmt_range([res[m][k][a][0] / 1000 for k in ks])
                                    for m in MAPPINGS) + " |")
        lines.append("")
        for m in MAPPINGS:
            best = [min(algs, key=lambda a: res[m][k][a][0]) for k in ks]
            lines.append(f"- fastest, map-by {m}: " +
                         (PAPER_NAME.get(best[0], best[0]) if len(set(best)) == 1 else
                          ", ".join(f"K={k} {PAPER_NAME.get(b, b)}" for k, b in zip(ks, best))))
        lines.append("")
    return "\n".join(lines), results


def plot(fig6_pred, fwd, docs_dir):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError:
        print("model_validate: matplotlib missing, no PNG", file=sys.stderr)
        return []
    paths = []
    # predicted against published, Fig. 6
    fig, ax = plt.subplots(figsize=(6, 5))
    lo_k, hi_k = MLP_RANGE[0], MLP_RANGE[-1]
    for i, m in enumerate(MAPPINGS):
        xs = [FIG6[a][i] for a in FIG6]
        lows = [fig6_pred[hi_k][m][a][0] / 1000 for a in FIG6]
        highs = [fig6_pred[lo_k][m][a][0] / 1000 for a in FIG6]
        dots = ax.scatter(xs, highs, label=f"map-by {m}, K={lo_k}")
        ax.scatter(xs, lows, marker="x", color=dots.get_facecolor()[0],
                   label=f"map-by {m}, K={hi_k}")
        for x, y0, y1 in zip(xs, lows, highs):
            ax.plot([x, x], [y0, y1], color=dots.get_facecolor()[0], lw=0.6)
        if i == 0:  # each point named once (the mappings' points of one algorithm sit together)
            # a label near an earlier one goes a line lower, so none covers another
            placed = []
            for a, x, y in sorted(zip(FIG6, xs, highs), key=lambda p: (-p[2], p[1])):
                lines = 0
                while any(abs(math.log10(x) - math.log10(px)) < 0.35 and
                          abs(math.log10(y) - math.log10(py)) < 0.08 and pl == lines
                          for px, py, pl in placed):
                    lines += 1
                placed.append((x, y, lines))
                ax.annotate(PAPER_NAME.get(a, a), (x, y), fontsize=6, xytext=(4, 2 - 8 * lines),
                            textcoords="offset points")
        every_y = [y for k in (lo_k, hi_k) for a in FIG6 for y in [fig6_pred[k][m][a][0] / 1000]]
        y_lo = min(every_y) if i == 0 else min(y_lo, min(every_y))
        y_hi = max(every_y) if i == 0 else max(y_hi, max(every_y))
    # both ends of every K range on the chart (K = 1 is the highest)
    ax.set_ylim(min(0.1, y_lo / 1.5), max(100, y_hi * 1.5))
    lo, hi = 0.1, 100
    ax.plot([lo, hi], [lo, hi], "k--", lw=0.8, label="predicted = published")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("published, us (Kurnosov 2022, Fig. 6)")
    ax.set_ylabel("predicted, us (topsync-sim)")
    ax.set_title("128 processes, 2 x Kunpeng 920-6426")
    ax.legend(fontsize=7)
    path = os.path.join(docs_dir, "model-fig6.png")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    paths.append(path)
    # forward predictions
    fig, axes = plt.subplots(1, len(fwd), figsize=(6 * len(fwd), 5), sharey=False)
    for ax, (key, res) in zip(axes, fwd.items()):
        ks = list(res["core"])
        algs = list(res["core"][ks[0]])
        width = 0.27
        for i, m in enumerate(MAPPINGS):
            hi = [res[m][ks[0]][a][0] / 1000 for a in algs]
            lo = [res[m][ks[-1]][a][0] / 1000 for a in algs]
            xs = [j + (i - 1) * width for j in range(len(algs))]
            # the bar up to the K = lowest prediction, a line on to the highest
            ax.bar(xs, lo, width, label=f"map-by {m}")
            ax.vlines(xs, lo, hi, color="k", lw=0.8)
            ends = (lo + hi) if i == 0 else ends + lo + hi
        # every bar and line inside the frame (lines were cut at its top)
        ax.set_ylim(min(ends) / 1.3, max(ends) * 1.3)
        ax.set_xticks(range(len(algs)))
        ax.set_xticklabels([PAPER_NAME.get(a, a) for a in algs], rotation=60, ha="right",
                           fontsize=8)
        ax.set_yscale("log")
        # plain numbers on the log axis (not 3 x 10^0)
        ax.yaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
        ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_ylabel(f"predicted barrier latency, us (bar: K={ks[-1]}, line to K={ks[0]})")
        ax.set_title(model_machines.MACHINES[key]["name"])
    # one legend for the panels, above them: it covers no bar
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", ncol=len(MAPPINGS), fontsize=9,
               bbox_to_anchor=(0.5, 1.0))
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    path = os.path.join(docs_dir, "model-forward.png")
    fig.savefig(path, dpi=100)
    plt.close(fig)
    paths.append(path)
    return paths


def marker(block, end=False):
    return f"<!-- model_validate.py {block}: {'end' if end else 'begin'} -->"


def replace_block(doc, block, text):
    begin, end = marker(block), marker(block, True)
    if begin not in doc or end not in doc:
        raise ValueError(f"docs/model.md has no {begin} ... {end}")
    head, rest = doc.split(begin, 1)
    _, tail = rest.split(end, 1)
    return head + begin + "\n" + text + "\n" + end + tail


def read_block(doc, block):
    begin, end = marker(block), marker(block, True)
    if begin not in doc or end not in doc:
        return None
    return doc.split(begin, 1)[1].split(end, 1)[0].strip("\n")


def main(argv):
    if not argv or argv[0].startswith("-"):
        print(__doc__)
        return 2
    build = argv[0]
    opts = argv[1:]

    def value(flag, default):
        return opts[opts.index(flag) + 1] if flag in opts else default
    out = value("--out", os.path.join(ROOT, "out", "model"))
    seeds = int(value("--seeds", 5))
    reps = int(value("--reps", 5))
    os.makedirs(out, exist_ok=True)
    sim = Sim(build, seeds)
    blocks, summary = {}, {}
    if "--skip-this-machine" not in opts and "--check-docs" not in opts:
        blocks["this-machine"], summary["this_machine"] = this_machine(build, out, sim, reps)
    text4, f4 = fig4(sim)
    text6, f6, f6_pred = fig6(sim)
    summary["fig4"] = {k: {x: y for x, y in v.items() if x != "pred"} for k, v in f4.items()}
    summary["fig6"] = f6
    textf, fwd = forward(sim, out)
    error, where = ratio_error(f4, f6_pred)
    text_error = ("### The model's error on a ratio\n\n"
                  "How far the model's ratio of two barriers' latencies can be from the "
                  "published one, over both figures and every K (Fig. 6: each algorithm "
                  "against topo at every level, the rules' choice; Fig. 4, which has no topo: "
                  f"against its published fastest): **{error:.2f}x**, at {where}. auto's "
                  "model step overrules the rules only where it predicts a margin beyond "
                  "this (src/select/model_error.h).\n")
    _, f4h = fig4(sim, home=True)
    _, f6h, _ = fig6(sim, home=True)
    summary["fig4_home"] = {k: {x: y for x, y in v.items() if x != "pred"} for k, v in f4h.items()}
    summary["fig6_home"] = f6h
    text_home = side_by_side(
        f4h, f6h, "### Both figures at each K, with the home's service time\n\n"
        f"A line's home serves one request per {model_machines.kunpeng_home_service_ns():.2f} ns "
        "(section 4: the Kunpeng's intra-die median latency over the miss overlap K "
        f"{model_machines.MEASURED_MISS_OVERLAP_K} measured on this machine, "
        "scripts/model_machines.py); every other input as above.\n")
    blocks["paper"] = "\n".join([text4, text6, side_by_side(f4, f6), text_home, text_error,
                                 textf])
    big = [sec for n, sec in sim.seconds if n == 128]
    blocks["timing"] = (f"Simulation time: {len(sim.seconds)} simulations; at 128 participants "
                        f"x 1000 episodes, median {statistics.median(big):.2f} s, longest "
                        f"{max(big):.2f} s (on the machine that ran this report).\n")
    report = "\n".join(blocks[b] for b in ("this-machine", "paper", "timing") if b in blocks)
    with open(os.path.join(out, "validation.md"), "w") as f:
        f.write(report)
    with open(os.path.join(out, "validation.json"), "w") as f:
        json.dump({"summary": summary, "fig6_pred": f6_pred, "forward": fwd}, f, indent=1)
    print(report)
    path = os.path.join(ROOT, "docs", "model.md")
    with open(path) as f:
        doc = f.read()
    if "--check-docs" in opts:
        shown = read_block(doc, "paper")
        if shown != blocks["paper"].strip("\n"):
            print("FAIL: docs/model.md does not show what the model predicts now; run "
                  "scripts/model_validate.py BUILD --update-docs and commit the result",
                  file=sys.stderr)
            return 1
        with open(ERROR_HEADER) as f:
            if f.read() != error_header(error, where):
                print(f"FAIL: {os.path.relpath(ERROR_HEADER, ROOT)} does not hold the model's "
                      "error now; run scripts/model_validate.py BUILD --update-docs",
                      file=sys.stderr)
                return 1
        print("docs/model.md shows the current predictions")
        return 0
    docs_dir = os.path.join(ROOT, "docs") if "--update-docs" in opts else out
    for p in plot(f6_pred, fwd, docs_dir):
        print(f"wrote {os.path.relpath(p, ROOT)}")
    if "--update-docs" in opts:
        for block, text in blocks.items():
            doc = replace_block(doc, block, text)
        with open(path, "w") as f:
            f.write(doc)
        print(f"updated {os.path.relpath(path, ROOT)}")
        with open(ERROR_HEADER, "w") as f:
            f.write(error_header(error, where))
        print(f"updated {os.path.relpath(ERROR_HEADER, ROOT)} (rebuild: auto uses it)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
