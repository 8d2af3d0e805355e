#!/bin/sh
# scripts/sched_validate.py refuses bad options with a message, and a file
# of kept runs that is not one or was measured with another binding (its
# runs take minutes: scripts/main.sh runs it; docs/model.md section 9).
#   sched_validate_test.sh SOURCE_DIR
set -u
src=$1
fail=0 passed=0
check() { # WANT ARGS...
    want=$1
    shift
    out=$(python3 "$src/scripts/sched_validate.py" "$@" 2>&1)
    rc=$?
    if [ $rc -ne 0 ] && echo "$out" | grep -qF -- "$want"; then
        passed=$((passed + 1))
    else
        echo "FAIL: sched_validate.py $*: rc $rc: $out"; fail=1
    fi
}
check "usage: sched_validate.py BUILD_DIR"
check "--np '0' is not valid" build --np 0
check "--np '2,x' is not valid" build --np 2,x
check "--bind 'numa' is not valid" build --bind numa
check "--reps '-1' is not valid" build --reps -1
check "unknown option --bogus" build --bogus 1
check "--episodes needs a value" build --episodes
check "--measured /nonexistent/runs.json: no such directory" build --measured /nonexistent/runs.json
tmp=$(mktemp)
echo '{"bind": "core", "np": {}}' > "$tmp"
check "holds runs bound 'core', not 'none'" build --measured "$tmp"
echo 'not json' > "$tmp"
check "is not a file of kept runs" build --measured "$tmp"
echo '[1, 2]' > "$tmp"
check "is not a file of kept runs: no runs per P" build --measured "$tmp"
rm -f "$tmp"
# the measurement against itself: hand-computed cases
if python3 - "$src/scripts" <<'PY'
import math, sys
sys.path.insert(0, sys.argv[1])
from sched_validate import against_itself
rho, spread = against_itself({"a": [1, 2, 1, 2], "b": [4, 8, 4, 8], "c": [10, 10]}, ["a", "b", "c"])
assert abs(rho - 1) < 1e-9 and abs(spread - 2 ** (2 / 3)) < 1e-9, (rho, spread)
rho, spread = against_itself({"a": [1, 3], "b": [3, 1], "c": [2, 2]}, ["a", "b", "c"])
assert abs(rho + 1) < 1e-9 and abs(spread - 3 ** (2 / 3)) < 1e-9, (rho, spread)
assert against_itself({"a": [1], "b": [2]}, ["a", "b"]) is None
PY
then
    passed=$((passed + 1))
else
    echo "FAIL: against_itself"; fail=1
fi
echo "$passed passed, $fail failed"
exit $fail
