#!/usr/bin/env bash
# A phase change (issue 53): an unmodified pthread program of THREADS
# unbound threads runs a fixed number of barriers; DELAY seconds after it
# starts, BUSY busy neighbour processes start beside it and run until it
# ends. The whole run's wall time, glibc's barrier against the pthread
# drop-in (LD_PRELOAD) with reactive barriers on (the default) and off
# (TOPSYNC_REACTIVE=off: the choice made before the first episode kept),
# the order turned round every round, RUNS rounds: a barrier chosen for an
# idle machine must cope when the machine stops being idle.
# The barriers are as many as the faster of the two needs for about
# TARGET_S seconds on the idle machine (calibrated first), so that both
# runs span the change. A Markdown table on stdout; the medians' ratio
# last.
#
#   usage: scripts/phase_change.sh [BUILD_DIR]
#   environment: THREADS (default 8), BUSY (default THREADS), DELAY
#   (seconds, default 0.4), RUNS (default 5), TARGET_S (default 1.2)
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(readlink -f "${1:-build}")
loop=$build/bench/topsync-bench-pthread-loop
shim=$(ls "$build"/pthread/libtopsync-pthread.so 2>/dev/null || true)
threads=${THREADS:-8} busy=${BUSY:-${THREADS:-8}} delay=${DELAY:-0.4} runs=${RUNS:-5}
target=${TARGET_S:-1.2}
for v in "$threads" "$busy" "$runs"; do
    [[ $v =~ ^[0-9]+$ ]] && [ "$v" -ge 1 ] ||
        { echo "phase_change.sh: THREADS, BUSY and RUNS take whole numbers >= 1, not '$v'" >&2; exit 2; }
done
for v in "$delay" "$target"; do
    [[ $v =~ ^[0-9]+(\.[0-9]+)?$ ]] ||
        { echo "phase_change.sh: DELAY and TARGET_S take seconds, not '$v'" >&2; exit 2; }
done
[ -x "$loop" ] && [ -n "$shim" ] ||
    { echo "phase_change.sh: no $loop or libtopsync-pthread.so in $build/pthread (build first)" >&2; exit 1; }
starter=
# on any exit: the neighbours and what starts them go too (their group)
trap '[ -n "$starter" ] && kill -TERM -- "-$starter" 2>/dev/null || true' EXIT
ns() { date +%s%N; }
# run IMPL ITERATIONS WITH_BUSY: the program's wall time in ns
run() {
    local impl=$1 iters=$2 with_busy=$3 env=() t0 t1
    starter=
    case $impl in
    topsync | on) env=(LD_PRELOAD="$shim" TOPSYNC_REACTIVE=on) ;;
    off) env=(LD_PRELOAD="$shim" TOPSYNC_REACTIVE=off) ;;
    esac
    if [ "$with_busy" = 1 ]; then
        # the neighbours start DELAY after the program, each a plain busy
        # loop, in a process group of their own (job control, set -m): one
        # kill of the group ends them whether or not they have started yet.
        # Killing the starter's children while it slept (a program done
        # within DELAY) let it start loops that nobody stopped: they ran on
        # after the script, and slowed whatever came next. Not setsid: a
        # new session is a new autogroup (CONFIG_SCHED_AUTOGROUP, on in
        # Debian's kernels), whose loops together get one task's share of
        # a CPU, not one each, as a neighbour started beside the program
        # does (docs/model.md section 9)
        set -m
        bash -c 'sleep "$1"; for _ in $(seq "$2"); do sh -c "while :; do :; done" & done; wait' \
            _ "$delay" "$busy" &
        starter=$!
        set +m
    fi
    t0=$(ns)
    env "${env[@]}" "$loop" "$threads" "$iters" 1 none >/dev/null
    t1=$(ns)
    if [ -n "$starter" ]; then
        kill -TERM -- "-$starter" 2>/dev/null || true
        wait "$starter" 2>/dev/null || true
        starter=
    fi
    echo $((t1 - t0))
}
# calibration, idle: ns per barrier of each, from two short runs (their
# difference leaves out the program's start and its threads' creation)
# lengthened until that difference is at least 20 ms
fast=""
for impl in glibc topsync; do
    probe=2000
    for _ in 1 2 3 4 5 6; do
        t1=$(run "$impl" "$probe" 0)
        t4=$(run "$impl" $((4 * probe)) 0)
        [ $((t4 - t1)) -ge 20000000 ] && break
        probe=$((4 * probe))
    done
    per=$(((t4 - t1) / (3 * probe + 3 * probe / 10)))
    [ "$per" -ge 1 ] || per=1
    [ -z "$fast" ] || [ "$per" -lt "$fast" ] && fast=$per
done
iters=$(awk -v t="$target" -v per="$fast" 'BEGIN { n = t * 1e9 / per / 1.1; if (n < 1000) n = 1000; printf "%d", n }')
echo "phase_change.sh: $threads threads, $iters barriers, $busy busy processes from ${delay} s, $runs rounds" >&2
declare -A times=()
names=(glibc on off)
for r in $(seq "$runs"); do
    # each variant first in turn: the order a round runs them in matters
    # on a shared machine
    k=$(((r - 1) % 3))
    order="${names[k]} ${names[(k + 1) % 3]} ${names[(k + 2) % 3]}"
    for impl in $order; do
        t=$(run "$impl" "$iters" 1)
        times[$impl]+="$t "
        echo "phase_change.sh: round $r $impl $((t / 1000000)) ms" >&2
    done
done
median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { printf "%.0f\n", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
declare -A med=()
for impl in "${names[@]}"; do med[$impl]=$(median ${times[$impl]}); done
label() { case $1 in glibc) echo "glibc's pthread_barrier" ;; on) echo "the drop-in, reactive on (default)" ;;
    off) echo "the drop-in, TOPSYNC_REACTIVE=off" ;; esac; }
echo "| program | whole run, median of $runs (ms) | / glibc | runs (ms) |"
echo "|---|---:|---:|---|"
for impl in "${names[@]}"; do
    printf '| %s | %d | %s | %s|\n' "$(label "$impl")" $((med[$impl] / 1000000)) \
        "$(awk -v a="${med[$impl]}" -v b="${med[glibc]}" 'BEGIN { printf "%.2f", a / b }')" \
        "$(for t in ${times[$impl]}; do printf '%d ' $((t / 1000000)); done)"
done
echo
awk -v a="${med[on]}" -v b="${med[glibc]}" -v c="${med[off]}" -v th="$threads" -v n="$iters" -v bz="$busy" -v d="$delay" 'BEGIN {
    printf "drop-in / glibc: %.2fx reactive, %.2fx not (%d unbound threads, %d barriers, %d busy processes from %s s)\n",
        a / b, c / b, th, n, bz, d }'
# a run over before the neighbours started measured no phase change: say so
# beside the figures (the calibration, on an idle machine, may have timed a
# slow moment of the faster program)
short=0 total=0
for impl in "${names[@]}"; do
    for t in ${times[$impl]}; do
        total=$((total + 1))
        awk -v t="$t" -v d="$delay" 'BEGIN { exit !(t < d * 1e9) }' && short=$((short + 1))
    done
done
if [ "$short" -gt 0 ]; then
    echo "warning: $short of the $total runs ended before the busy processes started (DELAY $delay s): they measured no phase change; raise TARGET_S"
fi
