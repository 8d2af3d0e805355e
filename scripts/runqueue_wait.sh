#!/usr/bin/env bash
# The run-queue wait of a woken glibc barrier sleeper beside 0-3 busy
# loops pinned to each of CPUs 0 and 1 (issue 54, docs/model.md section 9):
# compiles scripts/runqueue_wait.c and runs it for SECONDS (default 2) per
# count. Needs 2 CPUs or more; the busy loops run in a process group of
# their own (job control, set -m), ended after each count, in this
# script's session: a new session (setsid) would be a new autogroup, whose
# loops together get one task's share of a CPU (docs/model.md section 9).
# With BUILD_DIR, also the scheduler model's prediction of each count
# (topsync-sim, glibc's barrier; OS_NS: its --os-ns, the day's costs).
# With --trace, each count also runs under tracefs (sched_wakeup,
# sched_switch; needs root, exits 77 saying why without it) and says how
# the wait is spread over the wake-ups: the median, and the share of all
# the waiting in wake-ups that waited more than a millisecond (a tick).
#   usage: scripts/runqueue_wait.sh [--trace] [SECONDS] [BUILD_DIR]
set -eu
trace=
if [ "${1:-}" = --trace ]; then
    trace=1
    shift
fi
case ${1:-} in
-*)
    echo "runqueue_wait.sh: unknown option '$1'; valid: --trace, then SECONDS and BUILD_DIR" >&2
    exit 2
    ;;
esac
seconds=${1:-2}
build=${2:-}
if ! awk -v s="$seconds" 'BEGIN { exit !(s + 0 > 0 && s ~ /^[0-9.]+$/) }'; then
    echo "runqueue_wait.sh: SECONDS '$seconds': a positive number" >&2
    exit 2
fi
sim=
if [ -n "$build" ]; then
    sim=$build/tools/topsync-sim
    [ -x "$sim" ] || { echo "runqueue_wait.sh: no $sim (build first)" >&2; exit 2; }
fi
here=$(cd "$(dirname "$0")" && pwd)
. "$here/tracefs.sh"
[ -z "$trace" ] || tracefs_ready "runqueue_wait.sh --trace" sched/sched_wakeup sched/sched_switch
bin=$(mktemp -d "${TMPDIR:-/tmp}/topsync-rqwait.XXXXXX")
trace_off() {
    echo 0 > $T/tracing_on
    for e in sched_wakeup sched_switch; do echo 0 > $T/events/sched/$e/enable; done
}
trap 'rm -rf "$bin"; [ -z "$trace" ] || trace_off' EXIT
cc -O2 -o "$bin/runqueue_wait" "$here/runqueue_wait.c" -lpthread
for busy in 0 1 2 3; do
    echo "== $busy busy loop(s) pinned to each CPU"
    set -m
    bash -c "for j in \$(seq 1 $busy); do for c in 0 1; do
        taskset -c \$c sh -c 'while :; do :; done' & done; done; wait" &
    group=$!
    set +m
    sleep 0.3
    if [ -n "$trace" ]; then
        trace_off
        echo > $T/trace
        echo 32768 > $T/buffer_size_kb
        for e in sched_wakeup sched_switch; do echo 1 > $T/events/sched/$e/enable; done
        echo 1 > $T/tracing_on
    fi
    "$bin/runqueue_wait" "$seconds" || status=$?
    if [ -n "$trace" ]; then
        trace_off
        python3 -c 'import re, sys
woken, waits = {}, []
for line in sys.stdin:
    m = re.search(r"\s(\d+\.\d+): (sched_wakeup|sched_switch): (.*)", line)
    if not m:
        continue
    t, event, args = float(m.group(1)), m.group(2), m.group(3)
    if event == "sched_wakeup" and "comm=runqueue_wait " in args:
        woken[re.search(r"pid=(\d+)", args).group(1)] = t
    elif event == "sched_switch":
        n = re.search(r"next_comm=(\S+) next_pid=(\d+)", args)
        if n and n.group(1) == "runqueue_wait" and n.group(2) in woken:
            waits.append(t - woken.pop(n.group(2)))
if not waits:
    print("traced: no wake-up of the barrier threads seen")
    sys.exit(0)
waits.sort()
total = sum(waits)
slow = [w for w in waits if w > 1e-3]
print("traced: %d wake-ups, median wait %.1f us, mean %.1f us; %.2f%% waited over 1 ms, "
      "%.0f%% of all the waiting" % (len(waits), waits[len(waits) // 2] * 1e6,
      total / len(waits) * 1e6, 100.0 * len(slow) / len(waits),
      100.0 * sum(slow) / total if total else 0))' < $T/trace
    fi
    kill -- -"$group" 2>/dev/null || true
    wait "$group" 2>/dev/null || true
    [ "${status:-0}" = 0 ] || exit "$status"
    if [ -n "$sim" ]; then
        "$sim" barrier --topology 'pack:1 core:2 pu:1' --np 2 --bind core --noise $((2 * busy)) \
            --algorithm peer:glibc --wait block --episodes 20000 ${OS_NS:+--os-ns "$OS_NS"} --json |
            python3 -c 'import json, sys
r = json.load(sys.stdin)[0]
print("model: %.1f us an episode; run-queue wait per time on the CPU %.1f us" %
      (r["latency_ns"] / 1e3, r["runqueue_wait_ns"] / 1e3))'
    fi
done
