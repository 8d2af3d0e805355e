#!/usr/bin/env bash
# The thread and process barrier where users run it (issues 35 and 53):
# topsync's default (auto) against glibc's pthread_barrier and libgomp's
# barrier in the same command, and the pthread drop-in against glibc in an
# unmodified program, at P participants bound to cores on an idle machine
# and unbound beside 0, P/4, P and 2P busy neighbour processes
# (topsync-bench --noise); forked processes against glibc's process-shared
# barrier alike. Each condition runs twice, alternating, with reactive
# barriers on (the default) and off (TOPSYNC_REACTIVE=off: auto's first
# choice kept), so that what reacting changes is seen beside glibc's run of
# the same command. Every timed run lasts at least RUN_MS (many scheduler
# slices); a figure is the median over RUNS runs, and a ratio to glibc the
# median of the runs' ratios to glibc's run of the same round. A Markdown
# table on stdout.
#
#   usage: scripts/conditions.sh [BUILD_DIR]
#   environment: THREADS (default "2 4 8 16"), NOISE ("0 P/4 P 2P" in
#   units of P; default all four), RUNS (default 5), RUN_MS (default 250),
#   ITERS (the least iterations per run, default 2000), KINDS (default
#   "threads processes")
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(readlink -f "${1:-build}")
bench=$build/bench/topsync-bench
threads=${THREADS:-2 4 8 16} runs=${RUNS:-5} run_ms=${RUN_MS:-250} iters=${ITERS:-2000}
levels=${NOISE:-0 P/4 P 2P} kinds=${KINDS:-threads processes}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
noise_of() { # $1 level, $2 P
    case $1 in
    0) echo 0 ;; P/4) echo $((($2 + 3) / 4)) ;; P) echo "$2" ;; 2P) echo $((2 * $2)) ;;
    *) echo "conditions.sh: NOISE takes 0, P/4, P, 2P, not '$1'" >&2; exit 2 ;;
    esac
}
for n in $threads; do
    for kind in $kinds; do
        peers=pthread,omp,program
        [ "$kind" = processes ] && peers=pthread
        for condition in core $(for l in $levels; do echo "none:$l"; done); do
            case $condition in
            core) bind=core noise=0 ;;
            *) bind=none noise=$(noise_of "${condition#none:}" "$n") ;;
            esac
            for reactive in on off; do
                echo "conditions.sh: $n $kind, bind $bind, $noise busy, reactive $reactive" >&2
                TOPSYNC_REACTIVE=$reactive "$bench" barrier "--$kind" "$n" --algorithm auto \
                    --bind "$bind" --noise "$noise" --iterations "$iters" --runs "$runs" \
                    --run-ms "$run_ms" --peers "$peers" --json \
                    >"$tmp/$kind-$n-$bind-$noise-$reactive.json"
            done
        done
    done
done
python3 - "$tmp" <<'EOF'
import glob, json, os, statistics, sys
rows = {}
for path in glob.glob(os.path.join(sys.argv[1], "*.json")):
    reactive = path.rsplit("-", 1)[1][:-5]
    records = {r["algorithm"]: r for r in json.load(open(path))}
    auto = records["auto"]
    key = (auto["kind"] != "threads", auto["participants"], auto["bind"] == "none", auto["noise"])
    rows.setdefault(key, {})[reactive] = records
def median(records, name):
    r = records.get(name)
    return r["median_ns"] if r and r["median_ns"] > 0 else float("nan")
def figure(x, digits=1):
    return "-" if x != x else f"{x:.{digits}f}"
print("| participants | condition | auto ns (what ran) | glibc ns | libgomp ns "
      "| auto / glibc | auto / libgomp | reactive off: auto / glibc | drop-in / glibc |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
for key in sorted(rows):
    on, off = rows[key].get("on"), rows[key].get("off")
    if not on:
        continue
    auto = on["auto"]
    kind, n, bind, noise = auto["kind"], auto["participants"], auto["bind"], auto["noise"]
    condition = ("bound" if bind == "core" else "unbound") + ", " + (
        f"{noise} busy neighbour processes" if noise else "idle")
    what = auto.get("resolved", "?")
    if auto.get("switches"):
        what += f", {auto['switches']} switches"
    def vs(records, peer):
        paired = records["auto"].get("vs_pthread_paired") if peer == "peer:pthread" else None
        return paired if paired else median(records, "auto") / median(records, peer)
    t, g, o = median(on, "auto"), median(on, "peer:pthread"), median(on, "peer:omp")
    pg, pp = median(on, "peer:pthread-program"), median(on, "preload:pthread-program")
    off_ratio = vs(off, "peer:pthread") if off else float("nan")
    print(f"| {n} {kind} | {condition} | {t:.1f} ({what}) | {figure(g)} | {figure(o)} "
          f"| {figure(vs(on, 'peer:pthread'), 2)} | {figure(t / o, 2)} | {figure(off_ratio, 2)} "
          f"| {figure(pp / pg, 2)} |")
EOF
