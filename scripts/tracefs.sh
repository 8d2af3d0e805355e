# Sourced by the scripts that trace the scheduler (sched_trace.sh,
# runqueue_wait.sh --trace, sched_placement.sh): T, where tracefs is, and
# tracefs_ready WHO GROUP/EVENT..., which mounts tracefs if it is not and
# returns when every event is there (e.g. sched/sched_switch); else it
# says why ("SKIPPED: ...", naming WHO) and exits 77, as ctest counts a
# skip. Needs root.
T=/sys/kernel/tracing
tracefs_ready() {
    tracefs_who=$1
    shift
    if [ "$(id -u)" -ne 0 ]; then
        echo "SKIPPED: $tracefs_who needs root (tracefs)"
        exit 77
    fi
    [ -d $T/events ] || mount -t tracefs nodev $T 2>/dev/null || true
    for tracefs_event in "$@"; do
        if [ ! -d "$T/events/$tracefs_event" ]; then
            echo "SKIPPED: no ${tracefs_event#*/} event in $T (tracefs not available here)"
            exit 77
        fi
    done
}
