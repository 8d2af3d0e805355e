#!/usr/bin/env python3
"""Check the scheduler model (docs/model.md section 9) against this machine.

usage: sched_validate.py BUILD_DIR [--np LIST] [--bind core|none] [--reps R]
                         [--run-ms MS] [--episodes E] [--measured FILE]
                         [--os-ns LIST] [--placement P:NOISE_ON:START_ON ...]
                         [--mix P:NOISE_ON@START_ON=SHARE/... ...] [--seeds K]

For each P of LIST (default 2,4,8): R times (default 3), measure every
algorithm and glibc's barrier with P threads beside P busy processes
(topsync-bench barrier --threads P --bind BIND --noise P --wait block
--peers pthread --run-ms MS, TOPSYNC_REACTIVE=off: the model does not
switch), and predict the same with topsync-sim on this machine's topology
(--noise P --bind BIND --wait block, runs of MS ms as measured, at least
E episodes; the default latency table and scheduler costs: nothing here
is fitted). Per algorithm the
ratio predicted / measured (median measurement), per P the Spearman rank
correlation of predicted and measured. A Markdown report on stdout.

--measured FILE keeps the measurements: read from FILE when it holds those
of every P asked (same binding), else measured and written there, so that
two versions of the model can be checked against the same runs.

--os-ns LIST passes the scheduler's costs to topsync-sim (its --os-ns):
those that topsync-bench-sched-costs measured the same day as the runs,
for this VM's costs change from day to day (docs/model.md section 9).

--placement P:NOISE_ON:START_ON (repeatable) predicts P's runs with the
busy processes and the threads where a trace of the same command found
them (topsync-sim --noise-on NOISE_ON --start-on START_ON; e.g.
4:3,1:0,0,0,0: three busy processes on CPU 0, one on CPU 1, every thread
created on CPU 0) instead of in turn: where this VM's kernel puts them is
not Linux's rule (docs/model.md section 9, "The start the kernel gives
them").

--mix P:NOISE_ON@START_ON=SHARE/... (repeatable) predicts P's runs as
a mix of placements, for the model keeps the busy processes and the
threads about where they start (topsync-sim's crowd_share) and the
kernel moves them: each NOISE_ON@START_ON=SHARE says that the runs spent
SHARE (in any unit; normalised to their sum) of their time with the busy
processes per CPU as NOISE_ON and the threads as START_ON, as
scripts/sched_placement.sh prints it ("as sched_validate.py --mix").
Each placement is predicted from its own start and the runs' episodes
counted over the time in each: mixed = 1 / sum(share / latency). E.g.
4:2,2@0,0,0,0=28/2,2@0,0,0,1=34/2,2@0,0,1,1=38.

--seeds K predicts each case with topsync-sim seeds 1..K (default 1) and
takes the median per algorithm: where a placement holds or breaks is
chaotic in the model (docs/model.md section 9), one seed is one sample.
"""
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from model_validate import spearman  # noqa: E402

ALGORITHMS = ["sense-reversing", "sense-reversing-counter", "sense-reversing-gr",
              "combining-tree", "mcs", "tournament", "dissemination", "topo", "topo/tree"]


def parse(argv):
    opts = {"np": [2, 4, 8], "bind": "none", "reps": 3, "run_ms": 250, "episodes": 50000,
            "seeds": 1, "measured": None, "os_ns": None, "placement": {}, "mix": {}}
    if len(argv) < 2 or argv[1].startswith("-"):
        sys.exit(__doc__)
    build, i = argv[1], 2
    while i < len(argv):
        key = argv[i]
        if i + 1 >= len(argv):
            sys.exit(f"sched_validate.py: {key} needs a value")
        value = argv[i + 1]
        try:
            if key == "--np":
                opts["np"] = [int(v) for v in value.split(",")]
                if any(p < 1 or p > 64 for p in opts["np"]):
                    raise ValueError
            elif key == "--bind":
                if value not in ("core", "none"):
                    raise ValueError
                opts["bind"] = value
            elif key == "--measured":
                opts["measured"] = value
            elif key == "--os-ns":
                opts["os_ns"] = value
            elif key == "--placement":
                p, noise_on, start_on = value.split(":")
                placement_lists(int(p), noise_on, start_on)
                opts["placement"][int(p)] = (noise_on, start_on)
            elif key == "--mix":
                p, mix = parse_mix(value)
                opts["mix"][p] = mix
            elif key in ("--reps", "--run-ms", "--episodes", "--seeds"):
                opts[key[2:].replace("-", "_")] = int(value)
                if int(value) < 1:
                    raise ValueError
            else:
                sys.exit(f"sched_validate.py: unknown option {key}; valid: --np, --bind, --reps, "
                         "--run-ms, --episodes, --measured, --os-ns, --placement, --mix, --seeds")
        except ValueError:
            sys.exit(f"sched_validate.py: {key} '{value}' is not valid")
        i += 2
    both = sorted(set(opts["placement"]) & set(opts["mix"]))
    if both:
        sys.exit(f"sched_validate.py: P = {both[0]} has both --placement and --mix; give one")
    return build, opts


def placement_lists(p, noise_on, start_on):
    """--noise-on and --start-on of P's runs as lists: P busy processes
    in all, a CPU for each of the P threads, none negative; ValueError
    when not"""
    noise = [int(v) for v in noise_on.split(",")]
    start = [int(v) for v in start_on.split(",")]
    if p < 1 or sum(noise) != p or len(start) != p or min(noise + start) < 0:
        raise ValueError
    return noise, start


def parse_mix(value):
    """--mix P:NOISE_ON@START_ON=SHARE/...: (P, [(NOISE_ON, START_ON,
    share)]) with the shares normalised to their sum; ValueError when
    a placement does not fit P or comes twice"""
    p, entries = value.split(":")
    p, mix = int(p), []
    for entry in entries.split("/"):
        placement, share = entry.split("=")
        noise_on, start_on = placement.split("@")
        noise, start = placement_lists(p, noise_on, start_on)
        share = float(share)
        if max(start) >= len(noise) or not 0 < share < math.inf or \
                any(m[0] == noise_on and m[1] == start_on for m in mix):
            raise ValueError
        mix.append((noise_on, start_on, share))
    total = sum(m[2] for m in mix)
    return p, [(noise_on, start_on, share / total) for noise_on, start_on, share in mix]


def mixed_latency(latencies, shares):
    """one latency from a placement's each (ns), the time spent in it
    given by shares (summing to 1): the episodes of a run are the sum of
    each placement's time over its latency"""
    return 1 / sum(share / latency for latency, share in zip(latencies, shares))


def measure(build, p, opts):
    """{name: [median ns per rep]}: topsync-bench's records of each run"""
    runs = {}
    env = dict(os.environ, TOPSYNC_REACTIVE="off")
    for _ in range(opts["reps"]):
        with tempfile.NamedTemporaryFile(suffix=".json") as f:
            cmd = [os.path.join(build, "bench", "topsync-bench"), "barrier", "--threads", str(p),
                   "--bind", opts["bind"], "--noise", str(p), "--wait", "block", "--peers",
                   "pthread", "--run-ms", str(opts["run_ms"]), "--runs", "3", "--iterations",
                   "500", "--output", f.name]
            subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
            for r in json.load(open(f.name)):
                name = "peer:glibc" if r["algorithm"] == "peer:pthread" else r["algorithm"]
                if r.get("median_ns", 0) > 0 and (name in ALGORITHMS or name == "peer:glibc"):
                    runs.setdefault(name, []).append(r["median_ns"])
    return runs


def kept(opts):
    """the measurements kept in --measured FILE: {"bind": B, "np": {P: runs}}"""
    if opts["measured"] and not os.path.isdir(os.path.dirname(opts["measured"]) or "."):
        sys.exit(f"sched_validate.py: --measured {opts['measured']}: no such directory")
    if not opts["measured"] or not os.path.exists(opts["measured"]):
        return {"bind": opts["bind"], "np": {}}
    try:
        with open(opts["measured"]) as f:
            data = json.load(f)
        if not isinstance(data, dict) or not isinstance(data.get("np"), dict):
            raise ValueError("no runs per P")
    except (OSError, ValueError) as e:
        sys.exit(f"sched_validate.py: {opts['measured']} is not a file of kept runs: {e}")
    if data.get("bind") != opts["bind"]:
        sys.exit(f"sched_validate.py: {opts['measured']} holds runs bound '{data.get('bind')}', "
                 f"not '{opts['bind']}'")
    return data


def against_itself(measured, names):
    """(Spearman, geometric mean of max/min) between the medians of the odd
    and the even commands of each name: how far the measurement reproduces
    its own ranking and scale; None with fewer than two commands"""
    names = [n for n in names if len(measured[n]) >= 2]
    if len(names) < 2:
        return None
    odd = [statistics.median(measured[n][0::2]) for n in names]
    even = [statistics.median(measured[n][1::2]) for n in names]
    spread = math.exp(statistics.mean(abs(math.log(a / b)) for a, b in zip(odd, even)))
    return spearman(odd, even), spread


def predict(build, p, opts, placement=None, seed=1):
    """{name: topsync-sim's record} for P's runs, in turn or from
    placement (NOISE_ON, START_ON) when given"""
    cmd = [os.path.join(build, "tools", "topsync-sim"), "barrier", "--np", str(p), "--noise",
           str(p), "--bind", opts["bind"], "--wait", "block", "--episodes",
           str(opts["episodes"]), "--warmup", str(max(1, opts["episodes"] // 20)), "--run-ms",
           str(opts["run_ms"]), "--json"]
    for a in ALGORITHMS + ["peer:glibc"]:
        cmd += ["--algorithm", a]
    if opts["os_ns"]:
        cmd += ["--os-ns", opts["os_ns"]]
    if placement:
        cmd += ["--noise-on", placement[0], "--start-on", placement[1]]
    cmd += ["--seed", str(seed)]
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode:
        sys.exit(f"sched_validate.py: topsync-sim failed: {result.stderr.strip()}")
    out = result.stdout
    return {r["algorithm"]: r for r in json.loads(out)}


def predict_seeds(build, p, opts, placement=None):
    """{name: [topsync-sim's record of each seed 1..--seeds]}"""
    runs = {}
    for seed in range(1, opts["seeds"] + 1):
        for n, r in predict(build, p, opts, placement, seed).items():
            runs.setdefault(n, []).append(r)
    return runs


def median_latency(records):
    return statistics.median(r["latency_ns"] for r in records)


def kept_crowd(record, start_on):
    """the share of a run during which the model kept its start's crowd
    (the most threads on one CPU), from topsync-sim's crowd_share"""
    start = start_on.split(",")
    return record.get("crowd_share", {}).get(str(max(start.count(c) for c in set(start))), 0.0)


def main(argv):
    build, opts = parse(argv)
    print(f"# The scheduler model against this machine ({os.cpu_count()} CPUs)\n")
    print(f"P threads {'unbound' if opts['bind'] == 'none' else 'bound'} beside P busy "
          f"processes, wait block, TOPSYNC_REACTIVE=off; measured: median of the commands "
          f"(topsync-bench, runs of {opts['run_ms']} ms; {opts['reps']} unless kept); "
          f"predicted: topsync-sim, "
          f"runs of {opts['run_ms']} ms and {opts['episodes']} episodes at least, "
          f"{'the median of seeds 1-' + str(opts['seeds']) + ', ' if opts['seeds'] > 1 else ''}"
          f"{'scheduler costs ' + opts['os_ns'] if opts['os_ns'] else 'defaults'} "
          f"(docs/model.md section 9).\n")
    store = kept(opts)
    for p in opts["np"]:
        measured = store["np"].get(str(p))
        if measured is None:
            measured = store["np"][str(p)] = measure(build, p, opts)
            if opts["measured"]:
                with open(opts["measured"], "w") as f:
                    json.dump(store, f, indent=1)
        mix = opts["mix"].get(p)
        if mix:
            records = [predict_seeds(build, p, opts, (noise_on, start_on))
                       for noise_on, start_on, _ in mix]
            each = [{n: median_latency(runs) for n, runs in e.items()} for e in records]
            predicted = {n: mixed_latency([e[n] for e in each], [m[2] for m in mix])
                         for n in each[0] if all(n in e for e in each)}
            kept_share = [statistics.median(kept_crowd(r, m[1]) for runs in e.values()
                                            for r in runs) for e, m in zip(records, mix)]
        else:
            predicted = {n: median_latency(runs) for n, runs in
                         predict_seeds(build, p, opts, opts["placement"].get(p)).items()}
        names = [n for n in ALGORITHMS + ["peer:glibc"] if n in measured and n in predicted]
        print(f"## P = {p}\n")
        print(f"Measured: {max((len(measured[n]) for n in names), default=0)} commands.\n")
        if p in opts["placement"]:
            print(f"Predicted with the busy processes and threads placed as traced: "
                  f"--noise-on {opts['placement'][p][0]} --start-on "
                  f"{opts['placement'][p][1]}.\n")
        if mix:
            print("Predicted as a mix of placements (--noise-on NOISE_ON --start-on START_ON): " +
                  "; ".join(f"{100 * w:.0f}% of the time as {noise_on}@{start_on}"
                            for noise_on, start_on, w in mix) + ".\n")
            print("How long the model kept each start's crowd (the most threads on one CPU; "
                  "topsync-sim's crowd_share, median over the algorithms): " +
                  ", ".join(f"{m[0]}@{m[1]} {100 * k:.0f}%" for m, k in zip(mix, kept_share)) +
                  " of the run. Where it is low, that placement's figure is the model's course "
                  "from it, not the placement's own.\n")
        each_heads = "".join(f" from {noise_on}@{start_on} |"
                             for noise_on, start_on, _ in mix) if mix else ""
        print(f"| algorithm | measured ns (median; range) |{each_heads} predicted ns | "
              f"predicted / measured |")
        print("|---|---:|" + "---:|" * (len(mix) if mix else 0) + "---:|---:|")
        ratios = []
        for n in names:
            m = statistics.median(measured[n])
            ratio = predicted[n] / m
            ratios.append(ratio)
            each_cells = "".join(f" {e[n]:.0f} |" for e in each) if mix else ""
            print(f"| {n} | {m:.0f} ({min(measured[n]):.0f}-{max(measured[n]):.0f}) |"
                  f"{each_cells} {predicted[n]:.0f} | {ratio:.2f} |")
        rho = spearman([predicted[n] for n in names], [statistics.median(measured[n])
                                                        for n in names])
        geo = math.exp(statistics.mean(math.log(r) for r in ratios)) if ratios else float("nan")
        within = sum(0.5 <= r <= 2 for r in ratios)
        # where the commands' runs fall into two modes (at P = 4 here; what
        # puts a run in one or the other is not known: docs/model.md
        # section 9), a median is either mode: whether the prediction lies
        # among the commands' own runs
        inside = sum(min(measured[n]) <= predicted[n] <= max(measured[n]) for n in names)
        print(f"\nSpearman (predicted, measured) over {len(names)}: {rho:.2f}; "
              f"geometric mean of predicted / measured: {geo:.2f}; within 2x: {within}; "
              f"inside the range of the commands' runs: {inside}\n")
        self_check = against_itself(measured, names)
        if self_check:
            print(f"The measurement against itself (the median of its odd commands against "
                  f"that of its even ones): Spearman {self_check[0]:.2f}; geometric mean of "
                  f"their ratio, the larger over the smaller: {self_check[1]:.2f}. No model "
                  f"can be checked to finer than that.\n")


if __name__ == "__main__":
    main(sys.argv)
