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
#   usage: scripts/runqueue_wait.sh [SECONDS] [BUILD_DIR]
set -eu
seconds=${1:-2}
build=${2:-}
sim=
if [ -n "$build" ]; then
    sim=$build/tools/topsync-sim
    [ -x "$sim" ] || { echo "runqueue_wait.sh: no $sim (build first)" >&2; exit 2; }
fi
here=$(cd "$(dirname "$0")" && pwd)
bin=$(mktemp -d "${TMPDIR:-/tmp}/topsync-rqwait.XXXXXX")
trap 'rm -rf "$bin"' EXIT
cc -O2 -o "$bin/runqueue_wait" "$here/runqueue_wait.c" -lpthread
for busy in 0 1 2 3; do
    echo "== $busy busy loop(s) pinned to each CPU"
    set -m
    bash -c "for j in \$(seq 1 $busy); do for c in 0 1; do
        taskset -c \$c sh -c 'while :; do :; done' & done; done; wait" &
    group=$!
    set +m
    sleep 0.3
    "$bin/runqueue_wait" "$seconds" || status=$?
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
