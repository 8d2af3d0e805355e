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
parent = {}  # pid: the task that created it
line_re = re.compile(r"\[(\d+)\].*?\s(\d+\.\d+): (\w+): (.*)$")
for line in trace:
    m = line_re.search(line)
    if not m:
        continue
    cpu, ts, event, rest = int(m.group(1)), float(m.group(2)), m.group(3), m.group(4)
    fields = dict(re.findall(r"(\w+)=(\S+)", rest))
    if event == "sched_process_fork" and int(fields["pid"]) in ours:
        ours.add(int(fields["child_pid"]))
        parent[int(fields["child_pid"])] = int(fields["pid"])
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
# the busy processes: those that created no thread (topsync-bench's
# noise, not topsync-bench itself when COMMAND runs it)
makers = {parent.get(n[1]) for n in new if n[2] == "thread"}
busy_pids = {n[1] for n in new if n[2] == "process" and n[1] not in makers}
procs = [0] * ncpus
for n in new:
    if n[1] in busy_pids:
        procs[n[4]] += 1
print(f"\nbusy processes per CPU (--noise-on), COMMAND's own and the threads' makers left "
      f"out: {','.join(map(str, procs))}")
def grouped(is_one):
    """the tasks created together of those is_one(new entry) takes:
    [(CPUs placed on, pids)]"""
    groups, last = [], None
    for n in new:
        if not is_one(n):
            continue
        if last is None or n[0] - last > GROUP_GAP_S:
            groups.append(([], []))
        groups[-1][0].append(n[4])
        groups[-1][1].append(n[1])
        last = n[0]
    return groups
threads = grouped(lambda n: n[2] == "thread")
for i, (cpus, _) in enumerate(threads, 1):
    print(f"threads, group {i} of {len(cpus)} (--start-on): {','.join(map(str, cpus))}")
print(f"migrations of these tasks while the command ran: {moves}")
placed = {n[1]: (n[0], n[4]) for n in new}
moves_of = {}
for ts, pid, dest in moved:
    moves_of.setdefault(pid, []).append((ts, pid, dest))
def life(pids, begin, end):
    """(seconds, {pid: CPU}) of each stretch of [begin, end) during which
    none of pids moved, each followed from its creation"""
    cpu = {pid: placed[pid][1] for pid in pids}
    steps = sorted(step for pid in pids for step in moves_of.get(pid, []) if step[0] <= end)
    at = begin
    for ts, pid, dest in steps + [(end, None, None)]:
        if ts > at:
            yield ts - at, dict(cpu)
            at = ts
        if pid is not None:
            cpu[pid] = dest
def span(pids):
    """a group's life: from its last creation to its first exit; None
    while none has exited"""
    begin = max(placed[pid][0] for pid in pids)
    end = min((exited[pid] for pid in pids if pid in exited), default=None)
    return (begin, end) if end is not None and end > begin else None
def time_by(groups, key):
    """{group size: {key: seconds}} over the groups' lives; key(CPU of
    each task) names the placement of a moment"""
    shares = {}
    for _, pids in groups:
        lived = span(pids)
        if lived:
            by_key = shares.setdefault(len(pids), {})
            for seconds, cpu in life(pids, *lived):
                k = key(list(cpu.values()))
                by_key[k] = by_key.get(k, 0.0) + seconds
    return shares
def percent(shares):
    total = sum(shares.values())
    return {k: round(100 * v / total) for k, v in shares.items()}, total
def most_on_one(cpus):
    return max(cpus.count(c) for c in set(cpus))
def per_cpu(cpus):
    return ",".join(str(cpus.count(c)) for c in range(ncpus))
busy = time_by(grouped(lambda n: n[1] in busy_pids), per_cpu)
for size in sorted(busy):
    shares, total = percent(busy[size])
    parts = ", ".join(f"{k} {shares[k]}%" for k in sorted(shares, key=lambda k: -busy[size][k]))
    print(f"groups of {size} busy processes, their time by the count on each CPU (--noise-on): "
          f"{parts} ({total:.1f} s over the groups' lives)")
together = time_by(threads, most_on_one)
for size in sorted(together):
    shares, total = percent(together[size])
    parts = ", ".join(f"{m} on one CPU {shares[m]}%" for m in sorted(shares, reverse=True))
    print(f"groups of {size} threads, their time by the most on one CPU: {parts} "
          f"({total:.1f} s over the groups' lives)")
# each group of threads with the busy processes that lived through its
# life: the time in each placement of both, the CPUs relabelled (most
# threads first, then most busy processes; valid where the CPUs are
# alike, as on a VM's vCPUs) so that a placement and its mirror count as
# one, as topsync-sim --noise-on and --start-on take them
joint = {}
for _, pids in threads:
    lived = span(pids)
    if not lived:
        continue
    begin, end = lived
    alive = [b for b in busy_pids if placed[b][0] <= begin and exited.get(b, end) >= end]
    for seconds, cpu in life(list(pids) + alive, begin, end):
        t = [sum(cpu[p] == c for p in pids) for c in range(ncpus)]
        n = [sum(cpu[b] == c for b in alive) for c in range(ncpus)]
        order = sorted(range(ncpus), key=lambda c: (-t[c], -n[c], c))
        key = (len(pids), len(alive), ",".join(str(n[c]) for c in order),
               ",".join(str(i) for i, c in enumerate(order) for _ in range(t[c])))
        joint[key] = joint.get(key, 0.0) + seconds
for size, nbusy in sorted({k[:2] for k in joint}):
    mine = {k[2:]: v for k, v in joint.items() if k[:2] == (size, nbusy)}
    shares, total = percent(mine)
    ranked = sorted(mine, key=lambda k: (-round(mine[k], 9), k))
    parts = ", ".join(f"{n}@{t} {shares[(n, t)]}%" for n, t in ranked)
    print(f"groups of {size} threads beside {nbusy} busy processes, their time by placement "
          f"(--noise-on@--start-on, the CPUs relabelled): {parts} ({total:.1f} s)")
    kept = [k for k in ranked if shares[k] >= 1]
    left = 100 - sum(shares[k] for k in kept)
    if nbusy == size:  # as sched_validate.py runs them: P busy beside P threads
        print(f"as sched_validate.py --mix: {size}:" +
              "/".join(f"{n}@{t}={shares[(n, t)]}" for n, t in kept) +
              (f" (placements under 1% of the time, {left}% in all, left out)" if left > 0 else ""))
