#!/bin/sh
# scripts/sched_cases.py (docs/model.md section 9, "Same inputs, same
# prediction"): bad options are refused with a message; a short run gives
# the four cases of issue 53, each cell a ratio to glibc's barrier over
# the seeds; and two runs, two processes, give the same table.
#   sched_cases_test.sh SOURCE_DIR BUILD_DIR
set -u
src=$1 build=$2
run_script() { python3 "$src/scripts/sched_cases.py" "$@"; }
script_name=sched_cases.py refusal_rc=nonzero
. "$(dirname "$0")/refused.sh"
refused "usage: sched_cases.py BUILD_DIR"
refused "--seeds '0' is not a whole number of at least 1" "$build" --seeds 0
refused "--starts: unknown 'packed'; valid: spread, doubled" "$build" --starts spread,packed
refused "--schedulers: unknown 'bfs'; valid: eevdf, cfs" "$build" --schedulers bfs
refused "unknown option --bogus; valid: --seeds" "$build" --bogus 1
refused "--seeds needs a value" "$build" --seeds
refused "no /nonexistent/tools/topsync-sim" /nonexistent
refused "topsync-sim failed: topsync-sim: --os-ns takes NAME=NS" "$build" --seeds 1 --os-ns tock=1

args="$build --seeds 2 --starts doubled --schedulers eevdf,cfs"
first=$(run_script $args 2>&1)
second=$(run_script $args 2>&1)
cell='[0-9.e-]*x ([0-9.e-]*-[0-9.e-]*; [0-9.e-]*-[0-9.e-]*)'
rows=$(echo "$first" | grep -c "^| .* / glibc | [^|]* | $cell | $cell |\$")
if [ "$rows" = 4 ] && echo "$first" | grep -q '| EEVDF, two on PU 0 | CFS, two on PU 0 |'; then
    passed=$((passed + 1))
else
    echo "FAIL: sched_cases.py $args: $rows rows of 4: $first"; fail=1
fi
if [ "$first" = "$second" ]; then
    passed=$((passed + 1))
else
    echo "FAIL: sched_cases.py $args: two runs differ: $first // $second"; fail=1
fi
echo "$passed passed, $fail failed"
exit $fail
