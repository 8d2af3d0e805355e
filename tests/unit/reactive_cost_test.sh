#!/bin/sh
# topsync-bench-reactive-cost (what a reactive barrier's check adds to an
# episode, docs/results.md): a short run prints one JSON object, both
# barriers on the same configuration, every time positive and the
# quartiles of the difference in order; bad arguments are refused.
#   reactive_cost_test.sh TOPSYNC_BENCH_REACTIVE_COST
set -u
exe=$1
fail=0 passed=0
out=$("$exe" 2 3 2000)
if python3 -c '
import json, sys
r = json.loads(sys.argv[1])
assert (r["threads"], r["pairs"], r["episodes_per_block"]) == (2, 3, 2000), r
assert r["reactive"] and r["reactive"] == r["fixed"], r
assert r["switches"] >= 0, r
assert r["on_ns"] > 0 and r["off_ns"] > 0, r
assert r["on_minus_off_q25_ns"] <= r["on_minus_off_ns"] <= r["on_minus_off_q75_ns"], r
' "$out"; then
    passed=$((passed + 1))
else
    echo "FAIL: 2 3 2000 printed: $out"; fail=1
fi
for bad in "0" "x" "2 0" "2 -1" "2 3 0" "2 3 1x" "2 3 4 5" "2000"; do
    out=$($exe $bad 2>&1)
    rc=$?
    if [ $rc -eq 2 ] && echo "$out" | grep -q "^usage: topsync-bench-reactive-cost"; then
        passed=$((passed + 1))
    else
        echo "FAIL: $bad: rc $rc: $out"; fail=1
    fi
done
echo "$passed passed, $fail failed"
exit $fail
