#!/usr/bin/env python3
"""Predict busy many-core nodes with the scheduler model (docs/model.md section 9).

usage: sched_forward.py BUILD_DIR [--seeds K] [--episodes E] [--run-ms MS]
                         [--machines LIST] [--os-ns LIST] [--scheduler eevdf|cfs]

For three machines (a flat 16-core node, the issue-53 KVM guest's table when
../shared/data/c2c has it; a dual Xeon Gold 6242, 64 PUs on 2 sockets; the
barrier paper's dual Kunpeng 920, 128 cores), every PU a participant,
unbound, beside P/4, P and 2P busy processes: every algorithm under each
wait policy (spin, yield, block) and glibc's barrier, predicted by
topsync-sim (median of K seeds, default 3; runs of MS ms of virtual time,
default 200, as the benchmarks' busy runs, and E episodes at least,
default 100, after E/10 warm-up ones and MS/10 ms: a busy node's episodes
are decided by slices and ticks, which shorter runs never meet). Nothing is measured and nothing is fitted: the latency
tables are the machines' own (data/c2c), the scheduler's costs the ones
measured on the development VM (section 9's table).

A Markdown report on stdout: per machine and noise, the fastest
configuration (by the medians over the seeds), the robust one
(sense-reversing/block: the reactive barrier's configuration 1) and the
rules' dissemination under each policy, as ratios to glibc's, each seed's
against the same seed's glibc: the median and, with more than one seed,
the range over the seeds in brackets. Section 9 says where the model is known to miss.

--os-ns LIST passes the scheduler's costs and tick to topsync-sim (its
--os-ns), e.g. tick=1000000 for kernels built with CONFIG_HZ=1000 (RHEL's,
Fedora's, Ubuntu's since 24.04) where the default is this VM's HZ=250.
--scheduler cfs predicts kernels before 6.6 (RHEL 8 and 9, Ubuntu 22.04,
Debian 12) instead of EEVDF, this VM's (topsync-sim --scheduler).
"""
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_machines  # noqa: E402

ALGORITHMS = ["sense-reversing", "sense-reversing-counter", "sense-reversing-gr",
              "combining-tree", "mcs", "tournament", "dissemination", "topo"]
WAITS = ["spin", "yield", "block"]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KVM_TABLE = os.path.join(os.path.dirname(ROOT), "shared", "data", "c2c",
                         "intel-xeon-16vcpu-kvm.csv")


def machines():
    flat = ["--topology", "pack:1 l3:1 core:16 pu:1"]
    flat_what = "flat 16 cores, per-level default latencies"
    if os.path.exists(KVM_TABLE):
        flat += ["--c2c", KVM_TABLE]
        flat_what = "flat 16 cores, the issue-53 KVM guest's measured table"
    xeon = model_machines.MACHINES["xeon6242"]
    kunpeng = model_machines.MACHINES["kunpeng920"]
    return {
        "flat16": (flat_what, 16, flat),
        "xeon64": ("dual Xeon Gold 6242, 2 x 16 cores x 2 SMT", 64,
                   ["--topology", xeon["topology"], "--c2c", xeon["c2c"]]),
        "kunpeng128": ("dual Kunpeng 920-6426, 2 x 64 cores (the barrier paper's)", 128,
                       ["--topology", kunpeng["topology"], "--c2c", kunpeng["c2c"]]),
    }


def parse(argv):
    opts = {"seeds": 3, "episodes": 100, "run_ms": 200, "machines": list(machines()),
            "os_ns": None, "scheduler": None}
    if len(argv) < 2 or argv[1].startswith("-"):
        sys.exit(__doc__)
    build, i = argv[1], 2
    while i < len(argv):
        key = argv[i]
        if i + 1 >= len(argv):
            sys.exit(f"sched_forward.py: {key} needs a value")
        value = argv[i + 1]
        if key in ("--seeds", "--episodes", "--run-ms"):
            try:
                opts[key[2:].replace("-", "_")] = int(value)
                if opts[key[2:].replace("-", "_")] < 1:
                    raise ValueError
            except ValueError:
                sys.exit(f"sched_forward.py: {key} '{value}' is not a whole number >= 1")
        elif key == "--os-ns":
            opts["os_ns"] = value
        elif key == "--scheduler":
            if value not in ("eevdf", "cfs"):
                sys.exit(f"sched_forward.py: --scheduler takes eevdf or cfs, not '{value}'")
            opts["scheduler"] = value
        elif key == "--machines":
            opts["machines"] = value.split(",")
            bad = [m for m in opts["machines"] if m not in machines()]
            if bad:
                sys.exit(f"sched_forward.py: unknown machine {bad[0]}; valid: "
                         + ", ".join(machines()))
        else:
            sys.exit(f"sched_forward.py: unknown option {key}; valid: --seeds, --episodes, "
                     "--run-ms, --machines, --os-ns, --scheduler")
        i += 2
    return build, opts


def predict(sim, machine_args, np_, noise, wait, seeds, episodes, run_ms, os_ns, scheduler):
    """{algorithm: [latency ns of seed 1, 2, ...]} for one case."""
    runs = {}
    for seed in range(1, seeds + 1):
        cmd = [sim, "barrier", *machine_args, "--np", str(np_), "--noise", str(noise),
               "--bind", "none", "--wait", wait, "--episodes", str(episodes),
               "--warmup", str(max(1, episodes // 10)), "--run-ms", str(run_ms), "--seed",
               str(seed), "--json"] + (["--os-ns", os_ns] if os_ns else []) + \
              (["--scheduler", scheduler] if scheduler else [])
        for a in ALGORITHMS + (["peer:glibc"] if wait == "block" else []):
            cmd += ["--algorithm", a]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode:
            sys.exit(f"sched_forward.py: topsync-sim failed: {done.stderr.strip()}")
        out = done.stdout
        doc = json.loads(out)
        for r in doc["results"] if isinstance(doc, dict) else doc:
            runs.setdefault(r["algorithm"], []).append(r["latency_ns"])
    return runs


def ratio(lat, key, glibc):
    """key's ratio to glibc's barrier, seed by seed: the median, and the
    range over the seeds when there are several (a busy node's prediction
    turns on its start, section 9: a range says how much)."""
    r = sorted(v / g for v, g in zip(lat[key], glibc))
    text = f"{statistics.median(r):.3g}x"
    return text if len(r) == 1 else f"{text} ({r[0]:.3g}-{r[-1]:.3g})"


def main(argv):
    build, opts = parse(argv)
    sim = os.path.join(build, "tools", "topsync-sim")
    if not os.access(sim, os.X_OK):
        sys.exit(f"sched_forward.py: no {sim}; build first")
    print("| machine | busy | glibc us | fastest (ratio to glibc) | dissemination spin / yield / block "
          "| sense-reversing/block (robust) |")
    print("|---|---:|---:|---|---|---:|")
    for name in opts["machines"]:
        what, np_, args = machines()[name]
        for noise in (np_ // 4, np_, 2 * np_):
            lat = {}
            for wait in WAITS:
                for a, v in predict(sim, args, np_, noise, wait, opts["seeds"],
                                    opts["episodes"], opts["run_ms"], opts["os_ns"],
                                    opts["scheduler"]).items():
                    lat[(a, "block" if a == "peer:glibc" else wait)] = v
            glibc = lat[("peer:glibc", "block")]
            median = {k: statistics.median(v) for k, v in lat.items()}
            best = min((v, a, w) for (a, w), v in median.items() if a != "peer:glibc")
            diss = " / ".join(ratio(lat, ("dissemination", w), glibc) for w in WAITS)
            print(f"| {what} ({np_} unbound) | {noise} | {median[('peer:glibc', 'block')] / 1000:.1f} | "
                  f"{best[1]}/{best[2]} ({best[0] / median[('peer:glibc', 'block')]:.3g}x) | {diss} | "
                  f"{ratio(lat, ('sense-reversing', 'block'), glibc)} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
