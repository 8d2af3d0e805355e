#!/bin/sh
# scripts/sched_validate.py refuses bad options with a message, and a file
# of kept runs that is not one or was measured with another binding (its
# runs take minutes: scripts/main.sh runs it; docs/model.md section 9).
#   sched_validate_test.sh SOURCE_DIR
set -u
src=$1
run_script() { python3 "$src/scripts/sched_validate.py" "$@"; }
script_name=sched_validate.py refusal_rc=nonzero
. "$(dirname "$0")/refused.sh"
refused "usage: sched_validate.py BUILD_DIR"
refused "--np '0' is not valid" build --np 0
refused "--np '2,x' is not valid" build --np 2,x
refused "--bind 'numa' is not valid" build --bind numa
refused "--reps '-1' is not valid" build --reps -1
refused "unknown option --bogus" build --bogus 1
refused "--placement '4:3,1' is not valid" build --placement 4:3,1
refused "--placement '4:3,2:0,0,0,0' is not valid" build --placement 4:3,2:0,0,0,0
refused "--placement '4:3,1:0,0,0' is not valid" build --placement 4:3,1:0,0,0
refused "--placement '4:3,1:0,0,0,x' is not valid" build --placement 4:3,1:0,0,0,x
refused "--episodes needs a value" build --episodes
refused "--measured /nonexistent/runs.json: no such directory" build --measured /nonexistent/runs.json
tmp=$(mktemp)
echo '{"bind": "core", "np": {}}' > "$tmp"
refused "holds runs bound 'core', not 'none'" build --measured "$tmp"
echo 'not json' > "$tmp"
refused "is not a file of kept runs" build --measured "$tmp"
echo '[1, 2]' > "$tmp"
refused "is not a file of kept runs: no runs per P" build --measured "$tmp"
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
