#!/bin/sh
# scripts/phase_change.sh (issue 53's phase-change run): a tiny run (2
# threads, 1 busy process from 0.05 s, 1 round) prints its table and the
# ratio; bad values of its variables are refused with a message.
#   phase_change_test.sh SOURCE_DIR BUILD_DIR
set -u
src=$1 build=$2
fail=0 passed=0
# TARGET_S 0.02: the floor of 1000 barriers. Beside another test (ctest
# -j2) and the busy process, a barrier whose waits spin can cost a slice
# each: a run of TARGET_S 0.1 (5000-90000 barriers, calibrated when the
# machine was quieter) once outlasted the test's 120 s in CI, with nothing
# printed. A run that slow now fails with what it had printed.
out=$(THREADS=2 BUSY=1 DELAY=0.05 RUNS=1 TARGET_S=0.02 timeout 90 \
    "$src/scripts/phase_change.sh" "$build" 2>&1)
rc=$?
if [ $rc -eq 124 ]; then
    echo "FAIL: a tiny run took over 90 s; it printed: $out"; fail=1
elif echo "$out" | grep -q "^| glibc's pthread_barrier | [0-9]* |" &&
    echo "$out" | grep -q "^| the drop-in, reactive on (default) | [0-9]* | [0-9.]* |" &&
    echo "$out" | grep -q "^| the drop-in, TOPSYNC_REACTIVE=off | [0-9]* | [0-9.]* |" &&
    echo "$out" | grep -qE "^drop-in / glibc: [0-9.]+x reactive, [0-9.]+x not \(2 unbound threads, [0-9]+ barriers, 1 busy processes from 0.05 s\)$"; then
    passed=$((passed + 1))
else
    echo "FAIL: a tiny run printed: $out"; fail=1
fi
# runs all over before the neighbours start (DELAY 30 s) are flagged
out=$(THREADS=2 BUSY=1 DELAY=30 RUNS=1 TARGET_S=0.02 timeout 90 \
    "$src/scripts/phase_change.sh" "$build" 2>&1)
if echo "$out" | grep -q "^warning: 3 of the 3 runs ended before the busy processes started (DELAY 30 s)"; then
    passed=$((passed + 1))
else
    echo "FAIL: runs shorter than DELAY were not flagged; the run printed: $out"; fail=1
fi
for bad in "THREADS=0" "THREADS=x" "RUNS=-1" "DELAY=soon" "TARGET_S=1e3"; do
    out=$(env "$bad" "$src/scripts/phase_change.sh" "$build" 2>&1)
    rc=$?
    if [ $rc -eq 2 ] && echo "$out" | grep -q "^phase_change.sh: .* take"; then
        passed=$((passed + 1))
    else
        echo "FAIL: $bad: rc $rc: $out"; fail=1
    fi
done
echo "$passed passed, $fail failed"
exit $fail
