#!/bin/sh
# Boot a small Linux guest with two NUMA nodes under qemu (TCG) and run
# numa_vm_check in it: RCLAwareMalloc's pages, migrated and new, must sit on
# the server's node. Usage: run_numa_vm.sh CHECK_BINARY [WORKDIR]
# The kernel is Debian's (scripts/numa-vm-kernel.sh), the userland a static
# busybox, the check binary and the shared libraries it needs.
set -eu
check=$1
work=${2:-$(dirname "$check")/numa-vm}
here=$(cd "$(dirname "$0")" && pwd)
fail() { echo "FAIL: $*"; exit 1; }
command -v qemu-system-x86_64 >/dev/null || fail "qemu-system-x86_64 missing (apt-get install qemu-system-x86)"
busybox=$(command -v busybox) || fail "busybox missing (apt-get install busybox-static)"
file -L "$busybox" 2>/dev/null | grep -q 'statically linked' ||
    ldd "$busybox" 2>&1 | grep -q 'not a dynamic' || fail "$busybox is not static (busybox-static)"
kernel=$("$here/../../scripts/numa-vm-kernel.sh" "${TOPSYNC_NUMA_VM_CACHE:-/var/cache/topsync-numa-vm}") ||
    fail "no kernel image"

rm -rf "$work"
root=$work/root
mkdir -p "$root/bin" "$root/proc" "$root/sys" "$root/dev" "$root/tmp"
cp "$busybox" "$root/bin/busybox"
for tool in sh mount poweroff echo; do ln -s busybox "$root/bin/$tool"; done
cp "$check" "$root/bin/numa_vm_check"
# the binary's shared libraries, at the paths the loader looks for them
ldd "$check" | awk '/=>/ {print $3} /^\t\/lib/ {print $1}' | while read -r lib; do
    [ -f "$lib" ] || continue
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
done
# the build tree's libtopsync is found by RUNPATH, which ldd resolved above
cat > "$root/init" <<'INIT'
#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
echo "numa-vm: guest up"
/bin/numa_vm_check
echo "numa-vm: exit $?"
poweroff -f
INIT
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc 2>/dev/null | gzip -1) > "$work/initrd.gz"

log=$work/console.log
timeout "${TOPSYNC_NUMA_VM_TIMEOUT:-240}" qemu-system-x86_64 \
    -machine pc,accel=tcg -cpu max -smp 4 -m 1024 \
    -object memory-backend-ram,id=m0,size=512M -object memory-backend-ram,id=m1,size=512M \
    -numa node,nodeid=0,cpus=0-1,memdev=m0 -numa node,nodeid=1,cpus=2-3,memdev=m1 \
    -kernel "$kernel" -initrd "$work/initrd.gz" \
    -append "console=ttyS0 panic=-1 quiet loglevel=3" \
    -nographic -no-reboot -nodefaults -serial stdio > "$log" 2>&1 || true
grep 'numa-vm:' "$log" || true
grep -q 'numa-vm: PASS' "$log" || { echo "--- console ---"; tail -n 40 "$log"; fail "the guest did not report PASS"; }
echo "numa-vm: ok"
