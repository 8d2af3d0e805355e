#!/usr/bin/env python3
"""What scripts/sched_placement.sh prints from its trace: where the kernel
put the tasks a command created and how it moved them (docs/model.md
section 9, "The start the kernel gives them").

usage: sched_placement_report.py TRACE PID [CPUS]

TRACE is tracefs's text (task_newtask, sched_process_fork,
sched_wakeup_new, sched_migrate_task, sched_process_exit), PID the
command's process; CPUS the machine's count (default: this machine's).
"""
import os
import re
import sys

if len(sys.argv) not in (3, 4):
    sys.exit(__doc__)
try:
    command = int(sys.argv[2])
    ncpus = int(sys.argv[3]) if len(sys.argv) > 3 else os.cpu_count() or 1
    if command < 1 or ncpus < 1:
        raise ValueError
except ValueError:
    sys.exit(f"sched_placement_report.py: PID and CPUS are positive integers: {sys.argv[2:]}")
try:
    trace = open(sys.argv[1], errors="replace").readlines()
except OSError as e:
    sys.exit(f"sched_placement_report.py: {e}")
CLONE_THREAD = 0x10000
# a group of threads: created within this of each other (a program's
# pthread_create loop: 13-16 us apart here, docs/model.md section 9)
GROUP_GAP_S = 0.002
# COMMAND's tasks: its process and whatever it and they created
ours = {command}
kind, new, moves = {}, [], 0
moved, exited = [], {}  # (ts, pid, dest CPU) in order; pid: its exit
line_re = re.compile(r"\[(\d+)\].*?\s(\d+\.\d+): (\w+): (.*)$")
for line in trace:
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
ncpus = max([ncpus] + [max(n[3], n[4]) + 1 for n in new])
procs = [0] * ncpus
for n in new:
    if n[2] == "process":
        procs[n[4]] += 1
print(f"\nprocesses per CPU (--noise-on), COMMAND's own left out: {','.join(map(str, procs))}")
def grouped(of_kind):
    """the tasks of a kind created together: [(CPUs placed on, pids)]"""
    groups, last = [], None
    for ts, pid, k, frm, to, comm in new:
        if k != of_kind:
            continue
        if last is None or ts - last > GROUP_GAP_S:
            groups.append(([], []))
        groups[-1][0].append(to)
        groups[-1][1].append(pid)
        last = ts
    return groups
threads = grouped("thread")
for i, (cpus, _) in enumerate(threads, 1):
    print(f"threads, group {i} of {len(cpus)} (--start-on): {','.join(map(str, cpus))}")
print(f"migrations of these tasks while the command ran: {moves}")
placed = {n[1]: (n[0], n[4]) for n in new}
moves_of = {}
for ts, pid, dest in moved:
    moves_of.setdefault(pid, []).append((ts, pid, dest))
def time_by(groups, key):
    """{group size: {key: seconds}}: each group's life, from its last
    creation to its first exit, its tasks followed through their
    migrations; key(CPU of each task) names the placement of a moment"""
    shares = {}
    for _, g in groups:
        begin = max(placed[pid][0] for pid in g)
        end = min((exited[pid] for pid in g if pid in exited), default=None)
        if end is None or end <= begin:
            continue
        cpu = {pid: placed[pid][1] for pid in g}
        steps = sorted(step for pid in g for step in moves_of.get(pid, []) if step[0] <= end)
        at, by_key = begin, shares.setdefault(len(g), {})
        for ts, pid, dest in steps + [(end, None, None)]:
            if ts > at:
                k = key(list(cpu.values()))
                by_key[k] = by_key.get(k, 0.0) + ts - at
                at = ts
            if pid is not None:
                cpu[pid] = dest
    return shares
def percent(shares):
    total = sum(shares.values())
    return {k: round(100 * v / total) for k, v in shares.items()}, total
def most_on_one(cpus):
    return max(cpus.count(c) for c in set(cpus))
def per_cpu(cpus):
    return ",".join(str(cpus.count(c)) for c in range(ncpus))
busy = time_by(grouped("process"), per_cpu)
for size in sorted(busy):
    shares, total = percent(busy[size])
    parts = ", ".join(f"{k} {shares[k]}%" for k in sorted(shares, key=lambda k: -busy[size][k]))
    print(f"groups of {size} processes, their time by the count on each CPU (--noise-on): "
          f"{parts} ({total:.1f} s over the groups' lives)")
together = time_by(threads, most_on_one)
for size in sorted(together):
    shares, total = percent(together[size])
    parts = ", ".join(f"{m} on one CPU {shares[m]}%" for m in sorted(shares, reverse=True))
    print(f"groups of {size} threads, their time by the most on one CPU: {parts} "
          f"({total:.1f} s over the groups' lives)")
    # scripts/sched_validate.py --mix for this group size, the busy
    # processes as they were the longest (of the groups of as many)
    if size in busy:
        noise = max(busy[size], key=busy[size].get)
        print(f"as sched_validate.py --mix: {size}:{noise}:" +
              ",".join(f"{m}={shares[m]}" for m in sorted(shares, reverse=True) if shares[m]))
