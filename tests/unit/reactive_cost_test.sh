#!/bin/sh
# topsync-bench-reactive-cost (what a reactive barrier's check adds to an
# episode, docs/results.md): a short run prints one JSON object, both
# barriers on the same configuration, every time positive and the
# quartiles of the difference in order; bad arguments are refused.
#   reactive_cost_test.sh TOPSYNC_BENCH_REACTIVE_COST
set -u
exe=$1
run_script() { "$exe" "$@"; }
script_name=topsync-bench-reactive-cost refusal_rc=2
. "$(dirname "$0")/refused.sh"
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
refused "THREADS '0' is not a whole number 1..1024" 0
refused "THREADS 'x' is not a whole number 1..1024" x
refused "THREADS '2000' is not a whole number 1..1024" 2000
refused "PAIRS '0' is not a whole number 1..100000" 2 0
refused "PAIRS '-1' is not a whole number 1..100000" 2 -1
refused "EPISODES '0' is not a whole number 1..100000000" 2 3 0
refused "EPISODES '1x' is not a whole number 1..100000000" 2 3 1x
refused "usage: topsync-bench-reactive-cost [THREADS [PAIRS [EPISODES]]]" 2 3 4 5
echo "$passed passed, $fail failed"
exit $fail
