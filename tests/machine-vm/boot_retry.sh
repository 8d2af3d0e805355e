#!/bin/sh
# machine-vm.boot-retry: machine_vm.py gives up on a guest whose console
# stays silent before it is up, boots it once more, and fails with a
# message when the second boot stalls too, a boot that prints nothing but
# the kernel's soft-lockup warnings being stalled as well
# (tests/machine-vm/stalling_qemu.sh
# stands in for qemu; seconds, no guest). docs/design.md section 7.
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d /var/tmp/topsync-boot-retry.XXXXXX)
trap 'rm -rf "$out"' EXIT
passed=0
failed=0
run() { # WHAT
    TOPSYNC_MACHINE_VM_QEMU=$here/stalling_qemu.sh TOPSYNC_MACHINE_VM_ACCEL=tcg \
        TOPSYNC_MACHINE_VM_BOOT=10 python3 "$here/machine_vm.py" A "$out/$1" -- echo guest-said-hello \
        > "$out/$1.log" 2>&1
}
run once
rc=$?
if [ $rc -eq 0 ] && grep -q "booting it again" "$out/once.log" && grep -q guest-said-hello "$out/once.log" &&
    [ "$(cat "$out/once/.vm/boots")" = 2 ]; then
    echo "PASS: a stalled boot is tried again and the command runs (exit $rc)"; passed=$((passed + 1))
else
    echo "FAIL: a stalled boot was not retried (exit $rc):"; sed 's/^/  | /' "$out/once.log"; failed=$((failed + 1))
fi
STALLING_QEMU_LOCKUPS=1 run lockups
rc=$?
if [ $rc -eq 0 ] && grep -q "booting it again" "$out/lockups.log" &&
    grep -q guest-said-hello "$out/lockups.log" && [ "$(cat "$out/lockups/.vm/boots")" = 2 ]; then
    echo "PASS: a boot that prints only soft lockups is stalled: tried again"; passed=$((passed + 1))
else
    echo "FAIL: a boot printing soft lockups was not retried (exit $rc):"
    sed 's/^/  | /' "$out/lockups.log"; failed=$((failed + 1))
fi
STALLING_QEMU_ALWAYS=1 run always
rc=$?
if [ $rc -eq 125 ] && grep -q "not up: no console line for 10 s, 2 tries" "$out/always.log" &&
    [ "$(cat "$out/always/.vm/boots")" = 2 ]; then
    echo "PASS: two stalled boots end the run with exit 125 and a message"; passed=$((passed + 1))
else
    echo "FAIL: two stalled boots (exit $rc):"; sed 's/^/  | /' "$out/always.log"; failed=$((failed + 1))
fi
TOPSYNC_MACHINE_VM_BOOT=abc python3 "$here/machine_vm.py" A "$out/bad" -- true > "$out/bad.log" 2>&1
rc=$?
if [ $rc -eq 125 ] && grep -q "TOPSYNC_MACHINE_VM_BOOT='abc' is not valid; valid:" "$out/bad.log"; then
    echo "PASS: a bad TOPSYNC_MACHINE_VM_BOOT is refused naming the valid values"; passed=$((passed + 1))
else
    echo "FAIL: TOPSYNC_MACHINE_VM_BOOT=abc (exit $rc):"; sed 's/^/  | /' "$out/bad.log"; failed=$((failed + 1))
fi
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
