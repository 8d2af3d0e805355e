#!/bin/sh
# Why the kernel moves tasks while COMMAND runs: every sched_migrate_task
# event with its kernel stack (tracefs), counted per task name and reason:
# a wake-up placing the task (try_to_wake_up: wake_affine and
# select_idle_sibling), the periodic balancer (sched_balance_rq, from the
# tick's softirq), a CPU going idle pulling work (sched_balance_newidle),
# the balancer pushing a running task (active balance: the stopper), and
# the rest (fork, exec, affinity). docs/model.md section 9 reads it to see
# what the scheduler model leaves out.
#   usage: sched_trace.sh [--comm NAME,...] -- COMMAND [ARGS...]
# Needs root and tracefs (mounted here if it is not); exits 77, saying
# why, without them. Tracing is switched off again however it ends.
set -u
comms=
while [ $# -gt 0 ]; do
    case $1 in
    --comm)
        [ $# -ge 2 ] || { echo "sched_trace.sh: --comm needs NAME,..." >&2; exit 2; }
        comms=$2
        shift 2
        ;;
    --)
        shift
        break
        ;;
    *)
        echo "sched_trace.sh: unknown option '$1'; valid: --comm NAME,..., -- COMMAND" >&2
        exit 2
        ;;
    esac
done
if [ $# -eq 0 ]; then
    echo "usage: sched_trace.sh [--comm NAME,...] -- COMMAND [ARGS...]" >&2
    exit 2
fi
case $comms in
*[!A-Za-z0-9_.,-]*)
    echo "sched_trace.sh: --comm '$comms': names of letters, digits, '_', '.', '-'" >&2
    exit 2
    ;;
esac
. "$(dirname "$0")/tracefs.sh"
tracefs_ready sched_trace.sh sched/sched_migrate_task
E=$T/events/sched/sched_migrate_task
out=$(mktemp)
stop() {
    echo 0 > $T/tracing_on
    echo 0 > $E/enable
    echo '!stacktrace' > $E/trigger 2>/dev/null
    echo 0 > $E/filter
}
trap 'stop; rm -f "$out"' EXIT
trap 'exit 130' INT TERM
stop
echo > $T/trace
echo 8192 > $T/buffer_size_kb
if [ -n "$comms" ]; then
    filter=$(echo "$comms" | sed 's/[^,]*/comm == "&"/g; s/,/ || /g')
    echo "$filter" > $E/filter
fi
echo stacktrace > $E/trigger
echo 1 > $E/enable
echo 1 > $T/tracing_on
"$@"
rc=$?
echo 0 > $T/tracing_on
cat $T/trace > "$out"
python3 - "$out" <<'PY'
import collections, re, sys
REASONS = [("try_to_wake_up", "wake-up"), ("sched_balance_newidle", "newly idle"),
           ("active_load_balance", "active balance"), ("sched_balance_rq", "periodic balance"),
           ("load_balance", "periodic balance"), ("wake_up_new_task", "fork"),
           ("sched_exec", "exec"), ("set_cpus_allowed", "affinity")]
count = collections.Counter()
task = None
def done():
    if task:
        count[task[0], task[1] or "other"] += 1
for line in open(sys.argv[1], errors="replace"):
    m = re.search(r"sched_migrate_task: comm=(.+?) pid=\d+ prio=\d+ orig_cpu=\d+ dest_cpu=\d+", line)
    if m:
        done()
        task = [m.group(1), None]
    elif task and task[1] is None and line.lstrip().startswith("=>"):
        for key, reason in REASONS:
            if key in line:
                task[1] = reason
                break
done()
print("| task | moved by | migrations |")
print("|---|---|---:|")
for (comm, reason), n in sorted(count.items(), key=lambda kv: -kv[1]):
    print(f"| {comm} | {reason} | {n} |")
if not count:
    print("| (none) | | 0 |")
PY
exit $rc
