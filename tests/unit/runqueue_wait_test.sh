#!/bin/sh
# scripts/runqueue_wait.sh: bad arguments are refused with a message (rc
# 2); a short run prints both threads' accounts for each of the four
# counts, and with --trace (where tracefs is available: root, not a
# container; else reported as skipped) how the wait is spread, with
# tracing off again afterwards.
#   runqueue_wait_test.sh SOURCE_DIR
set -u
script=$1/scripts/runqueue_wait.sh
run_script() { "$script" "$@"; }
script_name=runqueue_wait.sh refusal_rc=2
. "$(dirname "$0")/refused.sh"
refused "unknown option '--bogus'" --bogus
refused "SECONDS '0': a positive number" 0
refused "SECONDS 'x': a positive number" x
refused "unknown option '-1'" --trace -1
refused "no /nonexistent/tools/topsync-sim (build first)" 1 /nonexistent
out=$("$script" 0.05 2>&1)
rc=$?
if [ $rc -eq 0 ] && [ "$(echo "$out" | grep -c '^== ')" = 4 ] &&
    [ "$(echo "$out" | grep -c 'run-queue wait per time on the CPU')" = 8 ]; then
    passed=$((passed + 1))
else
    echo "FAIL: a short run: rc $rc: $out"; fail=1
fi
out=$("$script" --trace 0.05 2>&1)
rc=$?
if [ $rc -eq 77 ]; then
    echo "the traced run skipped: $out"
elif [ $rc -eq 0 ] && [ "$(echo "$out" | grep -c '^traced: ')" = 4 ] &&
    [ "$(cat /sys/kernel/tracing/tracing_on)" = 0 ] &&
    [ "$(cat /sys/kernel/tracing/events/sched/sched_switch/enable)" = 0 ]; then
    passed=$((passed + 1))
else
    echo "FAIL: a short traced run: rc $rc: $out"; fail=1
fi
echo "$passed passed, $fail failed"
exit $fail
