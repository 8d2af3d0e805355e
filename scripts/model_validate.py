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
4. Forward: the same 10 algorithms (and topsync's default topo forms) on the
   dual EPYC 7742, dual Xeon Gold 6242 and Graviton2, every core, each
   mapping; a table and docs/model-forward.png.

Each prediction is the median over K seeds (default 5) of 1000 episodes.
The report goes to OUT/validation.md (default out/model); --update-docs
writes it into docs/model.md between its markers, and the PNGs to docs/.
Parts 2-4 are deterministic (same code, same tables, same seeds): with
--check-docs the script fails unless docs/model.md shows exactly what it
computed now, so that the document follows every change to an algorithm
or to the model (test model.sim_paper). Part 1 and the timings are
measurements of the machine that runs the script, in blocks of their own.
"""
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

    def predict(self, machine_args, np, map_by, algorithms, wait="spin"):
        """{algorithm: (median latency ns over the seeds, resolved)}"""
        per = {a: [] for a in algorithms}
        resolved = {}
        for seed in range(1, self.seeds + 1):
            cmd = [self.exe, "barrier", *machine_args, "--np", str(np), "--map-by", map_by,
                   "--seed", str(seed), "--wait", wait, "--json"]
            for a in algorithms:
                cmd += ["--algorithm", a]
            for rec in json.loads(run(cmd)):
                per[rec["algorithm"]].append(rec["latency_ns"])
                resolved[rec["algorithm"]] = rec["resolved"]
                self.seconds.append((np, rec["sim_seconds"]))
        return {a: (statistics.median(v), resolved[a]) for a, v in per.items()}


def kunpeng_args():
    m = model_machines.MACHINES["kunpeng920"]
    return ["--topology", m["topology"], "--c2c", m["c2c"]]


def this_machine(build, out, sim, reps):
    bench = os.path.join(build, "bench", "topsync-bench")
    rows = []  # per rep: {alg: (pred, meas)}
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
              f" (median {statistics.median(rhos):.2f})", ""]
    return "\n".join(lines), {"ratios": ratios_by_alg, "spearman": rhos}


def fig4(sim):
    pred = sim.predict(kunpeng_args(), 64, "core", list(FIG4))
    algs = list(FIG4)
    p = [pred[a][0] / 1000 for a in algs]
    q = [FIG4[a] for a in algs]
    rho = spearman(p, q)
    ratios = [x / y for x, y in zip(p, q)]
    lines = ["### 2. Fig. 4: 64 processes on one Kunpeng 920-6426\n",
             "| algorithm | predicted us | published us | ratio | predicted rank | published rank |",
             "|---|---:|---:|---:|---:|---:|"]
    rp, rq = ranks(p), ranks(q)
    for i, a in enumerate(algs):
        lines.append(f"| {a} | {p[i]:.2f} | {q[i]:.2f} | {ratios[i]:.2f} | {rp[i]:g} | "
                     f"{rq[i]:g} |")
    lines += ["", f"- Spearman: **{rho:.2f}**; ratio predicted / published: median "
                  f"**{statistics.median(ratios):.2f}**, worst **{worst(ratios):.2f}** "
                  f"({algs[ratios.index(worst(ratios))]})", ""]
    return "\n".join(lines), {"spearman": rho, "median": statistics.median(ratios),
                              "worst": worst(ratios), "pred": dict(zip(algs, p))}


def fig6(sim):
    algs = list(FIG6)
    pred = {m: sim.predict(kunpeng_args(), 128, m, algs) for m in MAPPINGS}
    lines = ["### 3. Fig. 6: 128 processes on two Kunpeng 920-6426\n",
             f"Across packages: {150.5} ns (section 2, fixed before this comparison).\n",
             "| algorithm | core: pred / pub us | numa: pred / pub | socket: pred / pub | "
             "CV pred | CV pub |", "|---|---:|---:|---:|---:|---:|"]
    p_all, q_all, ratios = [], [], []
    for a in algs:
        cells = []
        pv = []
        for k, m in enumerate(MAPPINGS):
            p = pred[m][a][0] / 1000
            q = FIG6[a][k]
            p_all.append(p)
            q_all.append(q)
            ratios.append(p / q)
            pv.append(p)
            cells.append(f"{p:.2f} / {q:.2f}")
        cv = lambda v: statistics.pstdev(v) / statistics.mean(v) * 100
        lines.append(f"| {PAPER_NAME.get(a, a)} | " + " | ".join(cells) +
                     f" | {cv(pv):.1f} % | {cv(FIG6[a]):.1f} % |")
    rho = spearman(p_all, q_all)
    per_map = {m: spearman([pred[m][a][0] for a in algs], [FIG6[a][k] for a in algs])
               for k, m in enumerate(MAPPINGS)}
    fastest = {m: min(algs, key=lambda a: pred[m][a][0]) for m in MAPPINGS}
    w = worst(ratios)
    lines += ["",
              f"- Spearman over the 30 times: **{rho:.2f}** (per mapping: " +
              ", ".join(f"{m} {r:.2f}" for m, r in per_map.items()) + ")",
              f"- ratio predicted / published: median **{statistics.median(ratios):.2f}**, "
              f"worst **{w:.2f}**",
              "- predicted fastest: " + ", ".join(f"map-by {m}: {PAPER_NAME.get(f, f)}"
                                                  for m, f in fastest.items()) +
              " (published: topo-NUMA under every mapping)", ""]
    return "\n".join(lines), {"spearman": rho, "per_mapping": per_map,
                              "median": statistics.median(ratios), "worst": w,
                              "fastest": fastest, "pred": pred}


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
             f"({epyc_cross:.1f} ns) between them (section 1).\n"]
    for key, args in machines.items():
        res = {m: sim.predict(args, cores[key], m, algs) for m in MAPPINGS}
        results[key] = res
        lines += [f"**{model_machines.MACHINES[key]['name']}**, {cores[key]} participants\n",
                  "| algorithm | resolved (map-by core) | core | numa | socket |",
                  "|---|---|---:|---:|---:|"]
        for a in algs:
            lines.append(f"| {PAPER_NAME.get(a, a)} | {res['core'][a][1]} | " +
                         " | ".join(f"{res[m][a][0] / 1000:.2f}" for m in MAPPINGS) + " |")
        best = {m: min(algs, key=lambda a: res[m][a][0]) for m in MAPPINGS}
        lines += ["", "fastest: " + ", ".join(f"map-by {m}: {PAPER_NAME.get(b, b)}"
                                              for m, b in best.items()), ""]
    return "\n".join(lines), results


def plot(fig6_res, fwd, docs_dir):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("model_validate: matplotlib missing, no PNG", file=sys.stderr)
        return []
    paths = []
    # predicted against published, Fig. 6
    fig, ax = plt.subplots(figsize=(6, 5))
    for k, m in enumerate(MAPPINGS):
        xs = [FIG6[a][k] for a in FIG6]
        ys = [fig6_res["pred"][m][a][0] / 1000 for a in FIG6]
        ax.scatter(xs, ys, label=f"map-by {m}")
    lo, hi = 0.1, 100
    ax.plot([lo, hi], [lo, hi], "k--", lw=0.8, label="predicted = published")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("published, us (Kurnosov 2022, Fig. 6)")
    ax.set_ylabel("predicted, us (topsync-sim)")
    ax.set_title("128 processes, 2 x Kunpeng 920-6426")
    ax.legend()
    path = os.path.join(docs_dir, "model-fig6.png")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    paths.append(path)
    # forward predictions
    fig, axes = plt.subplots(1, len(fwd), figsize=(6 * len(fwd), 5), sharey=False)
    for ax, (key, res) in zip(axes, fwd.items()):
        algs = list(res["core"])
        width = 0.27
        for k, m in enumerate(MAPPINGS):
            ax.bar([i + (k - 1) * width for i in range(len(algs))],
                   [res[m][a][0] / 1000 for a in algs], width, label=f"map-by {m}")
        ax.set_xticks(range(len(algs)))
        ax.set_xticklabels([PAPER_NAME.get(a, a) for a in algs], rotation=60, ha="right",
                           fontsize=8)
        ax.set_yscale("log")
        ax.set_ylabel("predicted barrier latency, us")
        ax.set_title(model_machines.MACHINES[key]["name"])
        ax.legend(fontsize=8)
    fig.tight_layout()
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
    text4, summary["fig4"] = fig4(sim)
    text6, f6 = fig6(sim)
    summary["fig6"] = {k: v for k, v in f6.items() if k != "pred"}
    textf, fwd = forward(sim, out)
    blocks["paper"] = "\n".join([text4, text6, textf])
    big = [sec for n, sec in sim.seconds if n == 128]
    blocks["timing"] = (f"Simulation time: {len(sim.seconds)} simulations; at 128 participants "
                        f"x 1000 episodes, median {statistics.median(big):.2f} s, longest "
                        f"{max(big):.2f} s (on the machine that ran this report).\n")
    report = "\n".join(blocks[b] for b in ("this-machine", "paper", "timing") if b in blocks)
    with open(os.path.join(out, "validation.md"), "w") as f:
        f.write(report)
    with open(os.path.join(out, "validation.json"), "w") as f:
        json.dump({"summary": summary, "fig6_pred": f6["pred"], "forward": fwd}, f, indent=1)
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
        print("docs/model.md shows the current predictions")
        return 0
    docs_dir = os.path.join(ROOT, "docs") if "--update-docs" in opts else out
    for p in plot(f6, fwd, docs_dir):
        print(f"wrote {os.path.relpath(p, ROOT)}")
    if "--update-docs" in opts:
        for block, text in blocks.items():
            doc = replace_block(doc, block, text)
        with open(path, "w") as f:
            f.write(doc)
        print(f"updated {os.path.relpath(path, ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
