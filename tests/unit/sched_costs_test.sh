#!/bin/sh
# topsync-bench-sched-costs (the scheduler model's constants, docs/model.md
# section 9): a short run prints one JSON object with every cost, each a
# positive number; bad options are refused with a message.
#   sched_costs_test.sh TOPSYNC_BENCH_SCHED_COSTS
set -u
exe=$1
fail=0 passed=0
out=$("$exe" --rounds 50)
if python3 -c '
import json, sys
r = json.loads(sys.argv[1])
keys = ["futex_wake_nobody_ns", "futex_wake_one_ns", "wakeup_latency_ns", "futex_wake_one_busy_ns",
        "wakeup_latency_busy_ns", "sched_yield_ns", "same_cpu_switch_ns", "busy_run_ns",
        "clock_read_ns", "create_ns", "futex_wake_same_cpu_ns"]
assert all(r[k] > 0 for k in keys), r
assert r["rounds"] == 50
beside = r["wakeup_latency_beside_busy_ns"]
assert len(beside) == 3 and all(v > 0 for v in beside), r
slow = r["wakeup_over_500us_beside_busy"]
assert len(slow) == 3 and all(0 <= v <= 1 for v in slow), r
assert r["tick_hz"] in (100, 250, 300, 1000), r
assert abs(r["tick_skew_ns"]) <= 1e9 / r["tick_hz"] / 2, r
for k in ("barrier_migrations_per_episode", "barrier_sleeps_per_episode"):
    assert r[k] is None or r[k] >= 0, r
for k in ("barrier_packed_share", "barrier_busy_uneven_share"):
    assert 0 <= r[k] <= 1, r
' "$out"; then
    passed=$((passed + 1))
else
    echo "FAIL: --rounds 50 printed: $out"; fail=1
fi
for bad in "--rounds 0" "--rounds x" "--rounds -3" "--rounds 2000000" "--bogus"; do
    out=$($exe $bad 2>&1)
    rc=$?
    if [ $rc -eq 2 ] && echo "$out" | grep -q "^topsync-bench-sched-costs: "; then
        passed=$((passed + 1))
    else
        echo "FAIL: $bad: rc $rc: $out"; fail=1
    fi
done
echo "$passed passed, $fail failed"
exit $fail
