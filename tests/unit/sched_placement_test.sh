#!/bin/sh
# scripts/sched_placement.sh: bad usage is refused with a message (rc 2);
# a traced command that starts two processes is shown with them and
# itself placed (itself left out of the count), none of another shell's
# meanwhile, its exit status passed on, and tracing off again afterwards;
# a group of threads is followed through its life.
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
    [ "$(echo "$out" | sed -n "s/^busy processes per CPU (--noise-on), COMMAND's own and the threads' makers left out: //p" |
        awk -F, '{ for (i = 1; i <= NF; i++) s += $i } END { print s }')" = 2 ] &&
    [ "$(cat /sys/kernel/tracing/tracing_on)" = 0 ] &&
    [ "$(cat /sys/kernel/tracing/events/task/task_newtask/enable)" = 0 ]; then
    passed=$((passed + 1))
else
    echo "FAIL: a traced 'exit 3' of two processes: rc $rc: $out"; fail=1
fi
# two threads followed from creation to exit (one group, or two when the
# second came later than the script's gap): their time by the most of
# them on one CPU, in shares that add up to the whole
if [ $rc -ne 77 ]; then
    out=$("$script" -- python3 -c 'import threading, time
threads = [threading.Thread(target=time.sleep, args=(0.05,)) for _ in range(2)]
for t in threads: t.start()
for t in threads: t.join()' 2>&1)
    lines=$(echo "$out" | sed -n 's/^groups of [12] threads, their time by the most on one CPU: //p')
    sums=$(echo "$lines" | while read -r line; do
        echo "$line" | grep -o '[0-9]*%' | tr -d % | awk '{ s += $1 } END { print s }'
    done)
    if [ -n "$lines" ] && ! echo "$sums" | awk '$1 < 99 || $1 > 101 { bad = 1 } END { exit !bad }' &&
        echo "$out" | grep -q '^threads, group 1 of [12] (--start-on): '; then
        passed=$((passed + 1))
    else
        echo "FAIL: two threads followed: $out"; fail=1
    fi
fi
echo "$passed passed, $fail failed"
exit $fail
