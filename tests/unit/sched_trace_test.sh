#!/bin/sh
# scripts/sched_trace.sh: bad options are refused with a message (rc 2);
# a traced command's exit status is passed on, after the table of
# migrations, and tracing is off again afterwards. Where tracefs is not
# available (not root, a container) the run is reported as skipped and
# the option checks still count.
#   sched_trace_test.sh SOURCE_DIR
set -u
script=$1/scripts/sched_trace.sh
run_script() { "$script" "$@"; }
script_name=sched_trace.sh refusal_rc=2
. "$(dirname "$0")/refused.sh"
refused "usage: sched_trace.sh"
refused "usage: sched_trace.sh" --
refused "unknown option '--bogus'" --bogus
refused "--comm needs NAME" --comm
refused "--comm 'a\"b'" --comm 'a"b' -- true
out=$("$script" --comm sh -- sh -c 'exit 3' 2>&1)
rc=$?
if [ $rc -eq 77 ]; then
    echo "the traced run skipped: $out"
elif [ $rc -eq 3 ] && echo "$out" | grep -q '^| task | moved by | migrations |$' &&
    [ "$(cat /sys/kernel/tracing/tracing_on)" = 0 ] &&
    [ "$(cat /sys/kernel/tracing/events/sched/sched_migrate_task/enable)" = 0 ]; then
    passed=$((passed + 1))
else
    echo "FAIL: a traced 'exit 3': rc $rc: $out"; fail=1
fi
echo "$passed passed, $fail failed"
exit $fail
