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
# first exit; each thread followed through its migrations). For
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
moved, exited = [], {}  # (ts, pid, dest CPU) in order; pid: its exit
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
        moved.append((ts, int(fields["pid"]), int(fields["dest_cpu"])))
    elif event == "sched_process_exit" and int(fields["pid"]) in kind:
        exited.setdefault(int(fields["pid"]), ts)
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
groups, group_pids, last = [], [], None
for ts, pid, k, frm, to, comm in new:
    if k != "thread":
        continue
    if last is None or ts - last > GROUP_GAP_S:
        groups.append([])
        group_pids.append([])
    groups[-1].append(to)
    group_pids[-1].append(pid)
    last = ts
for i, g in enumerate(groups, 1):
    print(f"threads, group {i} of {len(g)} (--start-on): {','.join(map(str, g))}")
print(f"migrations of these tasks while the command ran: {moves}")
# each group's life: from its last creation to its first exit, the CPU of
# each thread followed through its migrations; the time during which the
# most threads on one CPU was m, per group size
placed = {n[1]: (n[0], n[4]) for n in new}
moves_of = {}
for ts, pid, dest in moved:
    moves_of.setdefault(pid, []).append((ts, pid, dest))
shares = {}
for g in group_pids:
    begin = max(placed[pid][0] for pid in g)
    end = min((exited[pid] for pid in g if pid in exited), default=None)
    if end is None or end <= begin:
        continue
    cpu = {pid: placed[pid][1] for pid in g}
    steps = sorted(step for pid in g for step in moves_of.get(pid, []) if step[0] <= end)
    at, by_most = begin, shares.setdefault(len(g), {})
    for ts, pid, dest in steps + [(end, None, None)]:
        if ts > at:
            most = max(list(cpu.values()).count(c) for c in set(cpu.values()))
            by_most[most] = by_most.get(most, 0.0) + ts - at
            at = ts
        if pid is not None:
            cpu[pid] = dest
for size in sorted(shares):
    total = sum(shares[size].values())
    parts = ", ".join(f"{m} on one CPU {100 * shares[size][m] / total:.0f}%"
                      for m in sorted(shares[size], reverse=True))
    print(f"groups of {size} threads, their time by the most on one CPU: {parts} "
          f"({total:.1f} s over the groups' lives)")
PY
exit $rc
