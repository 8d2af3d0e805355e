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
tmp=$(mktemp)
echo '{"bind": "core", "np": {}}' > "$tmp"
check "holds runs bound 'core', not 'none'" build --measured "$tmp"
echo 'not json' > "$tmp"
check "is not a file of kept runs" build --measured "$tmp"
echo '[1, 2]' > "$tmp"
check "is not a file of kept runs: no runs per P" build --measured "$tmp"
rm -f "$tmp"
echo "$passed passed, $fail failed"
exit $fail
