# Sourced by guest_checks.sh (and tests/unit/guest_timing_test.sh): a
# check's timeout scaled to the guest's speed, and the verdict when it runs
# out: a hang (FAIL) or a guest too slow to tell (TOO SLOW). Uses and sets
# the caller's failed, too_slow, t0, log, rc; fail() is the caller's.
# The guest's speed (TCG shares the host's 2 CPUs with whatever else runs
# there: under load a check runs several times slower than in CI's idle
# runs). calibrate: ms for a fixed single-thread workload, 5000 bash
# additions. idle_ms is its time in an idle guest of this tier: 974 ms,
# the median of 7 in machine A under TCG on this 2-CPU AMD EPYC VM with
# nothing else running (574-1181 ms; 2026-11-25, measured by
#   tests/machine-vm/machine_vm.py A OUT -- tests/machine-vm/guest_checks.sh BUILD OUT 0 0 calibrate
# ); TOPSYNC_MACHINE_VM_IDLE_MS sets another host's. Each check's timeout is its base scaled by the slowdown measured
# just before it (never below the base). A check still running at its
# timeout while the guest slowed down further (the workload after it took
# more than 1.5x its time before) is reported as TOO SLOW, not as a hang:
# the tier then exits 77 (skipped) unless a check failed.
idle_ms=${TOPSYNC_MACHINE_VM_IDLE_MS:-974}
case $idle_ms in '' | *[!0-9]* | 0)
    echo "FAIL: TOPSYNC_MACHINE_VM_IDLE_MS='$idle_ms' is not valid; valid: a whole number of ms, 1 or more"
    exit 2 ;;
esac
calibrate() {
    local start i=0
    start=$(date +%s%N)
    while [ $i -lt 5000 ]; do i=$((i + 1)); done
    echo $((($(date +%s%N) - start) / 1000000))
}
# limited BASE_SECONDS COMMAND...: runs COMMAND under a timeout of
# BASE_SECONDS scaled to the guest's speed; sets rc, log and, when it timed
# out, timed_out ("hang" or "slow") and slow_note
limited() {
    local base=$1 before after limit
    shift
    before=$(calibrate)
    limit=$((base * before / idle_ms))
    [ $limit -lt $base ] && limit=$base
    log=$(timeout -k 10 $limit "$@" 2>&1)
    rc=$?
    timed_out=
    if [ $rc = 124 ] || [ $rc = 137 ]; then
        after=$(calibrate)
        slow_note="still running after $limit s (base $base s; the guest's workload took $before ms before, $after ms after, $idle_ms ms idle)"
        if [ $((after * 2)) -gt $((before * 3)) ]; then timed_out=slow; else timed_out=hang; fi
    fi
}
# a check that timed out: a hang, or a guest too slow to tell
timed_out() {
    if [ "$timed_out" = slow ]; then
        echo "TOO SLOW: $1: $slow_note: the guest slowed down during the check, the host is too busy to tell a hang from slowness"
        too_slow=$((too_slow + 1))
        t0=$(date +%s)
    else
        fail "$1: $slow_note: $(tail -n 5 <<<"$log")"
    fi
}
