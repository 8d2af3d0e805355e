#!/bin/sh
# scripts/sched_placement_report.py, on a hand-made trace whose answers
# are computed by hand: a command (pid 100) starts a process (110, as
# sched_validate.py starts topsync-bench), which creates four busy
# processes (two on each CPU) and a group of four threads (all on CPU 0);
# the kernel moves threads 106 (at +100 ms) and 105 (+200 ms) to CPU 1,
# and the busy process 101 to CPU 1 (+300 ms); thread 103 exits first
# (+400 ms), process 101 (+500 ms). The threads' life of 400 ms: 100 ms
# all on one CPU, 100 ms three and one, 200 ms two and two; the busy
# processes' 500 ms: 300 ms two and two, 200 ms one and three. Together,
# from the threads' last creation (+10.04 ms): 100 ms 2,2@0,0,0,0, 100
# ms 2,2@0,0,0,1, 90.26 ms 2,2@0,0,1,1, and 109.74 ms threads two and two
# beside one and three busy, which the CPUs relabelled make 3,1@0,0,1,1.
# Process 110, which made the threads, is not a busy one; another
# program's tasks (200, 201) are in the trace and must not count. Bad
# arguments are refused with a message.
#   sched_placement_report_test.sh SOURCE_DIR
set -u
report=$1/scripts/sched_placement_report.py
run_script() { python3 "$report" "$@"; }
script_name=sched_placement_report.py refusal_rc=nonzero
. "$(dirname "$0")/refused.sh"
trace=$(mktemp)
trap 'rm -f "$trace"' EXIT
refused "usage: sched_placement_report.py TRACE PID [CPUS]"
refused "PID and CPUS are positive integers" "$trace" x
refused "PID and CPUS are positive integers" "$trace" 100 0
refused "No such file or directory" /nonexistent/trace 100
# one line of tracefs's text: CPU, seconds, event, fields
line() { printf '           bench-100     [%03d] d..2. %s: %s: %s\n' "$@"; }
{
    echo "# tracer: nop"
    line 0 999.000000 task_newtask "pid=100 comm=sh clone_flags=1200000 oom_score_adj=0"
    line 0 999.000010 sched_wakeup_new "comm=sh pid=100 prio=120 target_cpu=000"
    line 0 999.500000 task_newtask "pid=110 comm=sh clone_flags=1200000 oom_score_adj=0"
    line 0 999.500000 sched_process_fork "comm=sh pid=100 child_comm=sh child_pid=110"
    line 0 999.500000 sched_wakeup_new "comm=bench pid=110 prio=120 target_cpu=001"
    t=0
    for pid_cpu in 101:0 102:1 107:0 108:1; do
        pid=${pid_cpu%:*} cpu=${pid_cpu#*:}
        line 0 "1000.000${t}00" task_newtask "pid=$pid comm=bench clone_flags=1200000 oom_score_adj=0"
        line 0 "1000.000${t}00" sched_process_fork "comm=bench pid=110 child_comm=bench child_pid=$pid"
        line 0 "1000.000${t}00" sched_wakeup_new "comm=busy pid=$pid prio=120 target_cpu=00$cpu"
        t=$((t + 1))
    done
    line 1 1000.005000 task_newtask "pid=201 comm=other clone_flags=1200000 oom_score_adj=0"
    line 1 1000.005000 sched_wakeup_new "comm=other pid=201 prio=120 target_cpu=001"
    for pid_ts in 103:1000.010000 104:1000.010010 105:1000.010020 106:1000.010040; do
        pid=${pid_ts%:*} ts=${pid_ts#*:}
        line 0 "$ts" task_newtask "pid=$pid comm=bench clone_flags=3d0f00 oom_score_adj=0"
        line 0 "$ts" sched_process_fork "comm=bench pid=110 child_comm=bench child_pid=$pid"
        line 0 "$ts" sched_wakeup_new "comm=bench pid=$pid prio=120 target_cpu=000"
    done
    line 1 1000.100000 sched_migrate_task "comm=other pid=201 prio=120 orig_cpu=1 dest_cpu=0"
    line 0 1000.110040 sched_migrate_task "comm=bench pid=106 prio=120 orig_cpu=0 dest_cpu=1"
    line 0 1000.210040 sched_migrate_task "comm=bench pid=105 prio=120 orig_cpu=0 dest_cpu=1"
    line 0 1000.300300 sched_migrate_task "comm=busy pid=101 prio=120 orig_cpu=0 dest_cpu=1"
    line 0 1000.410040 sched_process_exit "comm=bench pid=103 prio=120"
    line 0 1000.410050 sched_process_exit "comm=bench pid=104 prio=120"
    line 0 1000.500300 sched_process_exit "comm=busy pid=101 prio=120"
} > "$trace"
out=$(python3 "$report" "$trace" 100 2 2>&1)
expect() {
    if echo "$out" | grep -qxF -- "$1"; then
        passed=$((passed + 1))
    else
        echo "FAIL: no line '$1' in: $out"; fail=1
    fi
}
expect "busy processes per CPU (--noise-on), COMMAND's own and the threads' makers left out: 2,2"
expect "threads, group 1 of 4 (--start-on): 0,0,0,0"
expect "migrations of these tasks while the command ran: 3"
expect "groups of 4 busy processes, their time by the count on each CPU (--noise-on): 2,2 60%, 1,3 40% (0.5 s over the groups' lives)"
expect "groups of 4 threads, their time by the most on one CPU: 4 on one CPU 25%, 3 on one CPU 25%, 2 on one CPU 50% (0.4 s over the groups' lives)"
expect "groups of 4 threads beside 4 busy processes, their time by placement (--noise-on@--start-on, the CPUs relabelled): 3,1@0,0,1,1 27%, 2,2@0,0,0,0 25%, 2,2@0,0,0,1 25%, 2,2@0,0,1,1 23% (0.4 s)"
expect "as sched_validate.py --mix: 4:3,1@0,0,1,1=27/2,2@0,0,0,0=25/2,2@0,0,0,1=25/2,2@0,0,1,1=23"
if echo "$out" | grep -q "| 20[01] |"; then
    echo "FAIL: another program's tasks shown: $out"; fail=1
else
    passed=$((passed + 1))
fi
echo "$passed passed, $fail failed"
exit $fail
