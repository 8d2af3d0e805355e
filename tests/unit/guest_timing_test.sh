#!/usr/bin/env bash
# The machine-vm tier's timeout verdicts (tests/machine-vm/guest_timing.sh),
# on this host instead of a guest: a command that outlives its (scaled)
# timeout on a machine as fast after as before is a hang (FAIL); one during
# which the machine slowed down (CPU hogs it started) is TOO SLOW, counted
# apart; a command that finishes passes. The idle reference is this host's
# own calibration, so the base timeout is not stretched.
#   guest_timing_test.sh SOURCE_DIR
set -u
src=$1
passed=0 checks_failed=0
ok() { passed=$((passed + 1)); }
ko() { checks_failed=$((checks_failed + 1)); echo "FAILED: $*" >&2; }
failed=0 too_slow=0 t0=$(date +%s)
fail() { echo "FAIL(recorded): $1"; failed=$((failed + 1)); }
TOPSYNC_MACHINE_VM_IDLE_MS=1 . "$src/tests/machine-vm/guest_timing.sh"
idle_ms=$(calibrate); [ "$idle_ms" -ge 1 ] || idle_ms=1

limited 2 true
[ "$rc" = 0 ] && [ -z "$timed_out" ] && ok || ko "a quick command: rc $rc, timed_out '$timed_out'"

# (the two calibrations are short: on a loaded machine one may be 1.5x the
# other by chance, so a hang is asked for up to 3 times)
for try in 1 2 3; do
    limited 2 sleep 60
    [ "$timed_out" = hang ] && break
done
[ "$timed_out" = hang ] && ok || ko "sleep past the timeout: '$timed_out', expected hang ($slow_note)"
out=$(timed_out "sleeper" 2>&1)
grep -q "^FAIL(recorded): sleeper: still running after [0-9]* s" <<<"$out" && ok || ko "hang message: $out"

# a command that leaves 6 busy loops behind for 20 s (setsid: outside the
# process group timeout kills; not on the output pipe, which $(...) waits
# for), then sleeps: the calibration after its timeout runs among them
hogs() { for k in 1 2 3 4 5 6; do setsid timeout 20 sh -c 'while :; do :; done' >/dev/null 2>&1 & done; sleep 60; }
export -f hogs
limited 2 bash -c hogs
[ "$timed_out" = slow ] && ok || ko "a machine slowing down: '$timed_out', expected slow ($slow_note)"
out=$(timed_out "slowed" 2>&1; echo "too_slow=$too_slow")
grep -q "^TOO SLOW: slowed: still running after" <<<"$out" && grep -q "too_slow=1" <<<"$out" && ok ||
    ko "too-slow message: $out"
pkill -f 'while :; do :; done' 2>/dev/null

# a bad idle reference is refused with the valid values
out=$(TOPSYNC_MACHINE_VM_IDLE_MS=fast bash -c ". '$src/tests/machine-vm/guest_timing.sh'" 2>&1)
[ $? = 2 ] && grep -q "TOPSYNC_MACHINE_VM_IDLE_MS='fast' is not valid; valid:" <<<"$out" && ok ||
    ko "bad TOPSYNC_MACHINE_VM_IDLE_MS: $out"
echo "$passed passed, $checks_failed failed"
[ $checks_failed = 0 ]
