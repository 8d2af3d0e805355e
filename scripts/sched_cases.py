#!/usr/bin/env python3
"""The busy 16-core cases of issue 53, predicted (docs/model.md section 9).

usage: sched_cases.py BUILD_DIR [--seeds K] [--starts LIST] [--schedulers LIST]
                      [--os-ns LIST]

The 16-core KVM guest of issue 53 (one package, one L3, its measured
table ../shared/data/c2c/intel-xeon-16vcpu-kvm.csv), unbound participants
under block (the default wait) beside busy processes, each case predicted
by topsync-sim against glibc's barrier modelled the same way, over seeds
1..K (default 20): runs of 200 ms of virtual time, at least 100 episodes.
The cases, with what was measured there:

  16 threads, 16 busy: dissemination (what auto chose)    8.0x glibc
  16 threads, 16 busy: sense-reversing (the robust one)   goal <= 1.0x
  16 threads, 4 busy: dissemination                       5.0x
  the drop-in, 8 threads, 16 busy: combining tree         12-16x

--starts: where the participants start, `spread` (one per PU, the
model's default) and/or `doubled` (two on PU 0, none on PU 1: how this
VM's kernel starts threads, section 9); default both. --schedulers:
eevdf and/or cfs; default both. --os-ns passes the scheduler's costs on.

A Markdown table on stdout, a row per case and a column per scheduler and
start: each seed's ratio to the same seed's glibc, as the median, the
quartiles and the range over the seeds. One seed is one sample: the
learned spin's course turns on every event ("Same inputs, same
prediction").
"""
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sched_forward import KVM_TABLE as TABLE  # noqa: E402
CASES = [  # participants, busy processes, algorithm, label, measured there
    (16, 16, "dissemination", "16 threads, 16 busy: dissemination (auto) / glibc", "8.0x"),
    (16, 16, "sense-reversing", "16 threads, 16 busy: robust (sense-reversing) / glibc",
     "goal <= 1.0x"),
    (16, 4, "dissemination", "16 threads, 4 busy: dissemination (auto) / glibc", "5.0x"),
    (8, 16, "combining-tree", "the drop-in, 8 threads, 16 busy: combining tree / glibc",
     "12-16x"),
]
STARTS = {"spread": "one each", "doubled": "two on PU 0"}
SCHEDULERS = {"eevdf": "EEVDF", "cfs": "CFS"}


def fail(message):
    sys.exit(f"sched_cases.py: {message}")


def parse(argv):
    opts = {"seeds": 20, "starts": list(STARTS), "schedulers": list(SCHEDULERS), "os_ns": None}
    if len(argv) < 2 or argv[1].startswith("-"):
        sys.exit(__doc__)
    build, i = argv[1], 2
    while i < len(argv):
        key = argv[i]
        if key not in ("--seeds", "--starts", "--schedulers", "--os-ns"):
            fail(f"unknown option {key}; valid: --seeds, --starts, --schedulers, --os-ns")
        if i + 1 >= len(argv):
            fail(f"{key} needs a value")
        value = argv[i + 1]
        if key == "--seeds":
            if not value.isdigit() or int(value) < 1:
                fail(f"--seeds '{value}' is not a whole number of at least 1")
            opts["seeds"] = int(value)
        elif key in ("--starts", "--schedulers"):
            valid = STARTS if key == "--starts" else SCHEDULERS
            names = value.split(",")
            for name in names:
                if name not in valid:
                    fail(f"{key}: unknown {name!r}; valid: {', '.join(valid)}")
            opts[key[2:]] = names
        else:
            opts["os_ns"] = value
        i += 2
    sim = os.path.join(build, "tools", "topsync-sim")
    if not os.access(sim, os.X_OK):
        fail(f"no {sim}")
    if not os.path.exists(TABLE):
        fail(f"no {TABLE} (the machine's measured table)")
    return sim, opts


def ratio(sim, opts, case, scheduler, start, seed):
    n, busy, algorithm = case[0], case[1], case[2]
    cmd = [sim, "barrier", "--topology", "pack:1 l3:1 core:16 pu:1", "--c2c", TABLE,
           "--bind", "none", "--wait", "block", "--run-ms", "200", "--episodes", "100",
           "--np", str(n), "--noise", str(busy), "--algorithm", algorithm,
           "--algorithm", "peer:glibc", "--seed", str(seed), "--scheduler", scheduler, "--json"]
    if start == "doubled":
        cmd += ["--start-on", ",".join(["0", "0"] + [str(r) for r in range(2, n)])]
    if opts["os_ns"]:
        cmd += ["--os-ns", opts["os_ns"]]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        fail(f"topsync-sim failed: {run.stderr.strip()}")
    records = json.loads(run.stdout)
    return records[0]["latency_ns"] / records[1]["latency_ns"]


def summary(ratios):
    r = sorted(ratios)
    if len(r) == 1:
        return f"{r[0]:.3g}x"
    q1, _, q3 = statistics.quantiles(r, n=4, method="inclusive")
    return f"{statistics.median(r):.3g}x ({q1:.3g}-{q3:.3g}; {r[0]:.3g}-{r[-1]:.3g})"


def main(argv):
    sim, opts = parse(argv)
    columns = [(sched, start) for sched in opts["schedulers"] for start in opts["starts"]]
    print(f"Ratio to glibc over seeds 1-{opts['seeds']}: median (quartiles; range)\n")
    print("| case | measured there | " +
          " | ".join(f"{SCHEDULERS[s]}, {STARTS[p]}" for s, p in columns) + " |")
    print("|---|---|" + "---|" * len(columns))
    for case in CASES:
        cells = [summary([ratio(sim, opts, case, s, p, seed)
                          for seed in range(1, opts["seeds"] + 1)]) for s, p in columns]
        print(f"| {case[3]} | {case[4]} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv)
