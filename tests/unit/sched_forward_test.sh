#!/bin/sh
# scripts/sched_forward.py (docs/model.md section 9): bad options are refused
# with a message, and a short run of one machine gives its three rows, each
# with the fastest configuration and ratios to glibc's barrier.
#   sched_forward_test.sh SOURCE_DIR BUILD_DIR
set -u
src=$1 build=$2
run_script() { python3 "$src/scripts/sched_forward.py" "$@"; }
script_name=sched_forward.py refusal_rc=nonzero
. "$(dirname "$0")/refused.sh"
refused "usage: sched_forward.py BUILD_DIR"
refused "--seeds '0' is not a whole number" "$build" --seeds 0
refused "--episodes 'x' is not a whole number" "$build" --episodes x
refused "--run-ms '0' is not a whole number" "$build" --run-ms 0
refused "unknown machine epyc; valid: flat16, xeon64, kunpeng128" "$build" --machines flat16,epyc
refused "unknown option --bogus" "$build" --bogus 1
refused "--seeds needs a value" "$build" --seeds
refused "no /nonexistent/tools/topsync-sim" /nonexistent
refused "topsync-sim failed: topsync-sim: --os-ns takes NAME=NS" "$build" --machines flat16 --seeds 1 --os-ns tock=1
refused "--scheduler takes eevdf or cfs, not 'bfs'" "$build" --scheduler bfs

out=$(python3 "$src/scripts/sched_forward.py" "$build" --machines flat16 --seeds 1 --episodes 100 --run-ms 1 \
    --os-ns tick=1000000 --scheduler cfs 2>&1)
rows=$(echo "$out" | grep -c '^| flat 16 cores.*(16 unbound) | [0-9]* | [0-9.]* | [a-z-]*/[a-z]* ([0-9.e-]*x) |')
if [ "$rows" = 3 ] && echo "$out" | grep -q '| 4 |' && echo "$out" | grep -q '| 32 |'; then
    passed=$((passed + 1))
else
    echo "FAIL: sched_forward.py --machines flat16: $rows rows of 3: $out"; fail=1
fi
echo "$passed passed, $fail failed"
exit $fail
