#!/bin/sh
# Where the kernel puts the tasks COMMAND creates, and whether it moves
# them: each new process and thread (tracefs task_newtask, with its clone
# flags, and sched_wakeup_new, with the CPU chosen), in order, then the
# CPUs of the processes and of each group of threads created together,
# as topsync-sim --noise-on and --start-on take them (docs/model.md
# section 9, "The start the kernel gives them"), the migrations of those
# tasks while COMMAND ran, and how the threads of each group shared the
# CPUs over their lives: the share of the time during which the most of
# them on one CPU was 4, 3, ... (from the group's last creation to its
# first exit; each thread followed through its migrations); the same for
# the busy processes (those that create no thread), by their count on
# each CPU; and both together, each placement's share of the time, as
# scripts/sched_validate.py --mix takes them
# (scripts/sched_placement_report.py reads the trace). For
# topsync-bench barrier --threads P --noise K: the K busy processes, then
# each run's P threads.
#   usage: sched_placement.sh -- COMMAND [ARGS...]
# Needs root and tracefs (mounted here if it is not); exits 77, saying
# why, without them. Tracing is switched off again however it ends.
set -u
case ${1:-} in
--) shift ;;
*)
    echo "usage: sched_placement.sh -- COMMAND [ARGS...]" >&2
    exit 2
    ;;
esac
if [ $# -eq 0 ]; then
    echo "usage: sched_placement.sh -- COMMAND [ARGS...]" >&2
    exit 2
fi
. "$(dirname "$0")/tracefs.sh"
EVENTS="task/task_newtask sched/sched_process_fork sched/sched_wakeup_new sched/sched_migrate_task sched/sched_process_exit"
tracefs_ready sched_placement.sh $EVENTS
out=$(mktemp)
stop() {
    echo 0 > $T/tracing_on
    for e in $EVENTS; do echo 0 > "$T/events/$e/enable"; done
}
trap 'stop; rm -f "$out"' EXIT
stop
echo > $T/trace
echo 16384 > $T/buffer_size_kb
for e in $EVENTS; do echo 1 > "$T/events/$e/enable"; done
echo 1 > $T/tracing_on
"$@" &
pid=$!
wait $pid
rc=$?
echo 0 > $T/tracing_on
cat $T/trace > "$out"
python3 "$(dirname "$0")/sched_placement_report.py" "$out" "$pid"
exit $rc
