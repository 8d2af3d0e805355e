#!/bin/sh
# Where the kernel puts the tasks COMMAND creates, and whether it moves
# them: each new process and thread (tracefs task_newtask, with its clone
# flags, and sched_wakeup_new, with the CPU chosen), in order, then the
# CPUs of the processes and of each group of threads created together,
# as topsync-sim --noise-on and --start-on take them (docs/model.md
# section 9, "The start the kernel gives them"), and the migrations of
# those tasks while COMMAND ran. For topsync-bench barrier --threads P
# --noise K: the K busy processes, then each run's P threads.
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
EVENTS="task/task_newtask sched/sched_process_fork sched/sched_wakeup_new sched/sched_migrate_task"
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
python3 - "$out" "$pid" <<'PY'
import os, re, sys
CLONE_THREAD = 0x10000
# a group of threads: created within this of each other (a program's
# pthread_create loop: 13-16 us apart here, docs/model.md section 9)
GROUP_GAP_S = 0.002
# COMMAND's tasks: its process and whatever it and they created
command = int(sys.argv[2])
ours = {command}
kind, new, moves = {}, [], 0
line_re = re.compile(r"\[(\d+)\].*?\s(\d+\.\d+): (\w+): (.*)$")
for line in open(sys.argv[1], errors="replace"):
    m = line_re.search(line)
    if not m:
        continue
    cpu, ts, event, rest = int(m.group(1)), float(m.group(2)), m.group(3), m.group(4)
    fields = dict(re.findall(r"(\w+)=(\S+)", rest))
    if event == "sched_process_fork" and int(fields["pid"]) in ours:
        ours.add(int(fields["child_pid"]))
    elif event == "task_newtask":
        pid = int(fields["pid"])
        kind[pid] = ("command" if pid == command
                     else "thread" if int(fields["clone_flags"], 16) & CLONE_THREAD
                     else "process")
    elif event == "sched_wakeup_new" and int(fields["pid"]) in ours and int(fields["pid"]) in kind:
        pid = int(fields["pid"])
        new.append((ts, pid, kind[pid], cpu, int(fields["target_cpu"]), fields["comm"]))
    elif event == "sched_migrate_task" and int(fields["pid"]) in ours:
        moves += 1
if not new:
    print("no task created")
    sys.exit(0)
t0 = new[0][0]
print("| ms | task | name | kind | created from CPU | placed on CPU |")
print("|---:|---:|---|---|---:|---:|")
for ts, pid, k, frm, to, comm in new:
    print(f"| {1e3 * (ts - t0):.3f} | {pid} | {comm} | {k} | {frm} | {to} |")
ncpus = max([os.cpu_count() or 1] + [max(n[3], n[4]) + 1 for n in new])
procs = [0] * ncpus
for n in new:
    if n[2] == "process":
        procs[n[4]] += 1
print(f"\nprocesses per CPU (--noise-on), COMMAND's own left out: {','.join(map(str, procs))}")
groups, last = [], None
for ts, pid, k, frm, to, comm in new:
    if k != "thread":
        continue
    if last is None or ts - last > GROUP_GAP_S:
        groups.append([])
    groups[-1].append(to)
    last = ts
for i, g in enumerate(groups, 1):
    print(f"threads, group {i} of {len(g)} (--start-on): {','.join(map(str, g))}")
print(f"migrations of these tasks while the command ran: {moves}")
PY
exit $rc
