#!/bin/sh
# scripts/sched_placement.sh: bad usage is refused with a message (rc 2);
# a traced command that starts two processes is shown with them and
# itself placed (itself left out of the count), none of another shell's
# meanwhile, its exit status passed on, and tracing off again afterwards.
# Where tracefs is not available (not root, a container) the run is
# reported as skipped and the usage checks still count.
#   sched_placement_test.sh SOURCE_DIR
set -u
script=$1/scripts/sched_placement.sh
run_script() { "$script" "$@"; }
script_name=sched_placement.sh refusal_rc=2
. "$(dirname "$0")/refused.sh"
refused "usage: sched_placement.sh -- COMMAND"
refused "usage: sched_placement.sh -- COMMAND" --
refused "usage: sched_placement.sh -- COMMAND" sleep 1
# another task starting processes all the while, which must not be shown
(while :; do sleep 0.005; done) &
other=$!
out=$("$script" -- sh -c 'sleep 0.05 & sleep 0.05 & wait; exit 3' 2>&1)
rc=$?
kill $other
if [ $rc -eq 77 ]; then
    echo "the traced run skipped: $out"
elif [ $rc -eq 3 ] && echo "$out" | grep -q '^| ms | task | name | kind | created from CPU | placed on CPU |$' &&
    [ "$(echo "$out" | grep -c "| process |")" = 2 ] && echo "$out" | grep -q "| command |" &&
    [ "$(echo "$out" | sed -n "s/^processes per CPU (--noise-on), COMMAND's own left out: //p" |
        awk -F, '{ for (i = 1; i <= NF; i++) s += $i } END { print s }')" = 2 ] &&
    [ "$(cat /sys/kernel/tracing/tracing_on)" = 0 ] &&
    [ "$(cat /sys/kernel/tracing/events/task/task_newtask/enable)" = 0 ]; then
    passed=$((passed + 1))
else
    echo "FAIL: a traced 'exit 3' of two processes: rc $rc: $out"; fail=1
fi
echo "$passed passed, $fail failed"
exit $fail
