#!/bin/sh
# A stand-in for qemu-system-x86_64 that tests machine_vm.py's boot handling
# (machine-vm.boot-retry): the first boot prints the firmware's last line
# and stalls, as a TCG guest did once in CI; the next one "runs" the
# command on the host and reports as the guest's init does. Counts its
# boots in OUT/.vm/boots. STALLING_QEMU_ALWAYS=1: every boot stalls.
# STALLING_QEMU_LOCKUPS=1: the stalled boot prints the kernel's soft-lockup
# warnings every second instead of staying silent (a hung TCG guest did).
out=
for a in "$@"; do
    case $a in *machine_vm_out=*) out=${a#*machine_vm_out=}; out=${out%% *} ;; esac
done
[ -n "$out" ] || { echo "stalling_qemu: no machine_vm_out in the arguments" >&2; exit 1; }
boots=$(($(cat "$out/.vm/boots" 2>/dev/null || echo 0) + 1))
echo $boots > "$out/.vm/boots"
echo "Booting from ROM..."
if [ "$boots" = 1 ] || [ "${STALLING_QEMU_ALWAYS:-0}" = 1 ]; then
    if [ "${STALLING_QEMU_LOCKUPS:-0}" = 1 ]; then
        while :; do
            echo "[   28.707274] watchdog: BUG: soft lockup - CPU#0 stuck for 26s! [migration/0:17]"
            sleep 1
        done
    fi
    exec sleep 3600
fi
echo "machine-vm: guest up: 1 PUs"
sh "$out/cmd.sh" > "$out/stdout" 2>&1
echo $? > "$out/rc"
echo "machine-vm: done"
