#!/usr/bin/env python3
"""Boot an emulated many-core NUMA machine (qemu) and run one command in it.

The guest mounts the host's root file system read-only over 9p and chroots
into it, so the build tree, the MPIs and Python are the host's own; /tmp,
/dev/shm and /run are the guest's (tmpfs) and OUT, a host directory, is
shared writable: the command's output and exit status come back there.
What the command needs from the host's /tmp, /dev/shm or /run (the current
directory, this source tree, a path among its arguments, such as a build
tree made under /tmp) is shared read-only at the same path.
Not a timing tool: TCG runs every vCPU on the host's few cores.
See docs/design.md, "Emulated machines".

usage: machine_vm.py MACHINE OUT [--env NAME=VALUE]... -- COMMAND [ARG]...
       machine_vm.py --list
Exit status: the command's, or 125 when the guest could not run it.
"""
import os
import shlex
import shutil
import socket
import subprocess
import sys
import json
import queue
import re
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
CACHE = os.environ.get("TOPSYNC_NUMA_VM_CACHE", "/var/cache/topsync-numa-vm")
# the emulator; a test of this script's own boot handling puts a stand-in here
QEMU = os.environ.get("TOPSYNC_MACHINE_VM_QEMU", "qemu-system-x86_64")


class Machine:
    """sockets x cores x threads, NUMA nodes as (socket, first core, cores,
    memory MiB) with cores None for a memory-only node, and the order in
    which Linux numbers the PUs (a list of (socket, core, thread))."""

    def __init__(self, name, about, sockets, cores, threads, nodes, order, expect):
        self.name, self.about = name, about
        self.sockets, self.cores, self.threads = sockets, cores, threads
        self.nodes, self.order, self.expect = nodes, order, expect

    @property
    def npus(self):
        return self.sockets * self.cores * self.threads

    def contiguous(self):
        return self.order == socket_major(self.sockets, self.cores, self.threads)


def socket_major(sockets, cores, threads):
    return [(s, c, t) for s in range(sockets) for c in range(cores) for t in range(threads)]


def intel_order(sockets, cores, threads):
    """Even PUs on socket 0, odd on socket 1; the second threads of all
    cores after the first ones (how Intel servers' firmware numbers them)."""
    return [(s, c, t) for t in range(threads) for c in range(cores) for s in range(sockets)]


MACHINES = {
    # The paper's Kunpeng 920 (pack:2 numa:2 core:32) scaled down to 8 cores
    # per node. qemu's Intel CPUID gives each socket one L3 (across its two
    # nodes) and each core its own L2.
    "A": Machine("A", "2 sockets x 2 NUMA nodes x 8 cores, numbered by node",
                 2, 16, 1, [(0, 0, 8, 1024), (0, 8, 8, 1024), (1, 0, 8, 1024), (1, 8, 8, 1024)],
                 socket_major(2, 16, 1), "pack:2 l3:1 numa:2 l2:8 core:1 pu:1"),
    "B": Machine("B", "machine A with 2 SMT threads per core, numbered Intel-style",
                 2, 16, 2, [(0, 0, 8, 1024), (0, 8, 8, 1024), (1, 0, 8, 1024), (1, 8, 8, 1024)],
                 intel_order(2, 16, 2), "pack:2 l3:1 numa:2 l2:8 core:1 pu:2"),
    "C": Machine("C", "4 NUMA nodes of 12, 4, 12, 4 cores and a memory-only node",
                 2, 16, 1,
                 [(0, 0, 12, 1024), (0, 12, 4, 512), (1, 0, 12, 1024), (1, 12, 4, 512),
                  (1, None, None, 512)],
                 socket_major(2, 16, 1), None),
}


# the guest mounts its own tmpfs on these: a host path below them is not there
GUEST_PRIVATE = ("/tmp", "/dev/shm", "/run")


def private_to_guest(path):
    return any(path == root or path.startswith(root + "/") for root in GUEST_PRIVATE)


def host_shares(paths, out):
    """The directories among paths (a file stands for its directory) that
    the guest would not see, outermost only, OUT and what lies in it left
    out (OUT is shared on its own, writable)."""
    out = os.path.realpath(out)
    dirs = []
    for p in paths:
        if not os.path.isabs(p) or not os.path.exists(p):
            continue
        p = os.path.realpath(p)
        if not os.path.isdir(p):
            p = os.path.dirname(p)
        if private_to_guest(p) and p not in GUEST_PRIVATE and \
                not (p == out or p.startswith(out + "/")):
            dirs.append(p)
    shares = []
    for d in sorted(set(dirs), key=len):
        if not any(d.startswith(s + "/") for s in shares):
            shares.append(d)
    return shares


def qemu_args(m, kernel, initrd, out, qmp, accel, shares=()):
    mem = sum(n[3] for n in m.nodes)
    hotplug = not m.contiguous()
    args = [QEMU, "-machine", "pc,accel=" + accel,
            "-cpu", "max,vendor=GenuineIntel",
            "-smp", "%d,maxcpus=%d,sockets=%d,cores=%d,threads=%d" % (
                1 if hotplug else m.npus, m.npus, m.sockets, m.cores, m.threads),
            "-m", "%dM" % mem]
    for i, (sock, first, count, mib) in enumerate(m.nodes):
        args += ["-object", "memory-backend-ram,id=m%d,size=%dM" % (i, mib),
                 "-numa", "node,nodeid=%d,memdev=m%d" % (i, i)]
    for i, (sock, first, count, mib) in enumerate(m.nodes):
        if count is None:
            continue
        for core in range(first, first + count):
            args += ["-numa", "cpu,node-id=%d,socket-id=%d,core-id=%d" % (i, sock, core)]
    args += ["-kernel", kernel, "-initrd", initrd,
             "-append", "console=ttyS0 panic=-1 quiet loglevel=3 machine_vm_out=%s "
                        "machine_vm_pus=%d machine_vm_name=%s" % (out, m.npus, m.name.lower()),
             "-virtfs", "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap",
             "-virtfs", "local,path=%s,mount_tag=out,security_model=none" % out,
             "-nographic", "-no-reboot", "-nodefaults", "-serial", "stdio"]
    for i, path in enumerate(shares):
        args += ["-virtfs", "local,path=%s,mount_tag=share%d,security_model=none,readonly=on,"
                            "multidevs=remap" % (path, i)]
    if hotplug:
        args += ["-qmp", "unix:%s,server=on,wait=off" % qmp]
    return args


INIT = r"""#!/bin/sh
# machine-vm guest init: the host's root read-only over 9p, then chroot.
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for m in $(cat /modules/order); do insmod /modules/$m || echo "machine-vm: insmod $m failed"; done
for word in $(cat /proc/cmdline); do
    case $word in machine_vm_*=*) eval "${word%%=*}=${word#*=}";; esac
done
say() { echo "machine-vm: $*"; }
mkdir -p /host
o="trans=virtio,version=9p2000.L,msize=512000"
mount -t 9p -o "$o,ro,cache=loose" hostroot /host || { say "cannot mount the host's root"; poweroff -f; }
mount -t proc proc /host/proc
mount -t sysfs sys /host/sys
mount -t devtmpfs dev /host/dev
mkdir -p /host/dev/pts /host/dev/shm
mount -t devpts devpts /host/dev/pts
mount -t tmpfs -o mode=1777 shm /host/dev/shm
mount -t tmpfs -o mode=1777 tmp /host/tmp
mount -t tmpfs run /host/run
# the host's directories under its /tmp, /dev/shm or /run that the command
# needs (machine_vm.py's host_shares), outermost first, then OUT
while read -r tag path; do
    mkdir -p "/host$path" 2>/dev/null
    mount -t 9p -o "$o,ro,cache=loose" "$tag" "/host$path" || { say "cannot mount $path"; poweroff -f; }
done < /shares
mkdir -p "/host$machine_vm_out" 2>/dev/null # when it lies in the guest's /tmp
mount -t 9p -o "$o" out "/host$machine_vm_out" || { say "cannot mount $machine_vm_out"; poweroff -f; }
# Hot-plugged PUs get the next Linux numbers in the order they arrive: ask
# the host for each one, wait until it is there, bring it online.
i=1
while [ ! -e /sys/devices/system/cpu/cpu$((machine_vm_pus - 1))/online ] &&
      [ $i -lt $machine_vm_pus ]; do
    say "want-cpu $i"
    n=0
    while [ ! -e /sys/devices/system/cpu/cpu$i/online ] && [ $n -lt 600 ]; do
        sleep 0.1; n=$((n + 1))
    done
    i=$((i + 1))
done
for f in /sys/devices/system/cpu/cpu*/online; do
    [ "$(cat $f)" = 1 ] || echo 1 > $f
done
hostname "$machine_vm_name"
say "guest up: $(grep -c ^processor /proc/cpuinfo) PUs"
chroot /host /bin/sh "$machine_vm_out/cmd.sh" > "/host$machine_vm_out/stdout" 2>&1
echo $? > "/host$machine_vm_out/rc"
sync
say "done"
poweroff -f
"""


def build_initrd(work, shares=()):
    busybox = shutil.which("busybox")
    if not busybox:
        raise SystemExit("FAIL: busybox missing (apt-get install busybox-static)")
    root = os.path.join(work, "initrd-root")
    shutil.rmtree(root, ignore_errors=True)
    for d in ("bin", "proc", "sys", "dev", "modules"):
        os.makedirs(os.path.join(root, d))
    shutil.copy(busybox, os.path.join(root, "bin", "busybox"))
    for tool in ("sh", "mount", "insmod", "cat", "sleep", "mkdir", "hostname", "grep",
                 "chroot", "poweroff", "echo", "sync"):
        os.symlink("busybox", os.path.join(root, "bin", tool))
    for name in os.listdir(os.path.join(CACHE, "modules")):
        shutil.copy(os.path.join(CACHE, "modules", name), os.path.join(root, "modules"))
    with open(os.path.join(root, "init"), "w") as f:
        f.write(INIT)
    with open(os.path.join(root, "shares"), "w") as f:
        for i, path in enumerate(shares):
            f.write("share%d %s\n" % (i, path))
    os.chmod(os.path.join(root, "init"), 0o755)
    initrd = os.path.join(work, "initrd.gz")
    subprocess.run("cd %s && find . | cpio -o -H newc 2>/dev/null | gzip -1 > %s"
                   % (shlex.quote(root), shlex.quote(initrd)), shell=True, check=True)
    return initrd


def qmp_session(path, deadline):
    while True:
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(path)
            break
        except OSError:
            if time.time() > deadline:
                raise
            time.sleep(0.2)
    f = s.makefile("rw")
    f.readline()  # greeting

    def command(name, **arguments):
        f.write(json.dumps({"execute": name, "arguments": arguments}) + "\n")
        f.flush()
        while True:
            reply = json.loads(f.readline())
            if "return" in reply or "error" in reply:
                return reply
    command("qmp_capabilities")
    return command


# What a stuck kernel prints: the soft-lockup watchdog and RCU's stall
# detector.
STUCK_LINE = re.compile(r"soft lockup|rcu_\w+ (self-)?detected stall|rcu: INFO: .*stall")


def run_guest(m, args, work, qmp, accel, boot_deadline, timeout):
    """Run qemu until the guest powers off; answer its PU requests over QMP
    (socket qmp). Until the guest is up, boot_deadline is the time allowed
    without a new console line (a hot-plugging guest prints one per PU), so
    a boot that stalls is told from a slow one. Returns (what happened,
    seconds until the guest was up or None)."""
    if os.path.exists(qmp):
        os.unlink(qmp)
    start = time.time()
    progress = start
    console = open(os.path.join(work, "console.log"), "a")
    proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, errors="replace")
    lines = queue.Queue()
    threading.Thread(target=lambda: [lines.put(l) for l in proc.stdout] + [lines.put(None)],
                     daemon=True).start()
    qmp_command = None
    booted = None
    what = "powered off"
    try:
        while True:
            limit = start + timeout
            if booted is None:
                limit = min(limit, progress + boot_deadline)
            try:
                line = lines.get(timeout=max(0.1, limit - time.time()))
            except queue.Empty:
                line = ""
            if line is None:
                if booted is None:
                    what = "qemu exited with %s" % proc.wait()
                break
            if time.time() > limit:
                what = "no end after %.0f s" % timeout if booted else \
                       "not up: no console line for %.0f s" % boot_deadline
                if booted is not None:
                    print("FAIL: machine %s (%s): %s" % (m.name, accel.upper(), what))
                break
            # a guest stuck in its boot still prints the kernel's stall
            # warnings, one per vCPU every ~30 s: they are not progress
            # (a TCG guest hung so in CI, its soft lockups holding off the
            # stall deadline until the test's timeout)
            if booted is not None or not STUCK_LINE.search(line):
                progress = time.time()
            console.write(line)
            console.flush()
            if "machine-vm: " not in line:
                continue
            word = line.split("machine-vm: ", 1)[1].strip()
            if word.startswith("want-cpu "):
                if qmp_command is None:
                    qmp_command = qmp_session(qmp, time.time() + 30)
                sock, core, thread = m.order[int(word.split()[1])]
                reply = qmp_command("device_add", driver="max-x86_64-cpu",
                                    id="cpu%d" % int(word.split()[1]),
                                    **{"socket-id": sock, "core-id": core, "thread-id": thread})
                if "error" in reply:
                    print("FAIL: hot-plugging a PU: %s" % reply["error"])
                    break
            elif word.startswith("guest up"):
                booted = time.time() - start
                print("machine-vm %s: %s after %.0f s (%s)" % (m.name, word, booted, accel.upper()))
            elif word != "done":
                print("machine-vm %s: %s" % (m.name, word))
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        console.close()
    return what, booted


def main(argv):
    if argv[1:2] == ["--list"]:
        for m in MACHINES.values():
            print("%s: %s (%d PUs)%s" % (m.name, m.about, m.npus,
                                         ", expected " + m.expect if m.expect else ""))
        return 0
    if "--" not in argv or len(argv) < 5:
        print(__doc__, file=sys.stderr)
        return 2
    name, out = argv[1], os.path.abspath(argv[2])
    options, command = argv[3:argv.index("--")], argv[argv.index("--") + 1:]
    if name not in MACHINES:
        print("machine_vm: unknown machine %r (valid: %s)" % (name, ", ".join(MACHINES)),
              file=sys.stderr)
        return 2
    m = MACHINES[name]
    env = []
    while options:
        if options[0] != "--env" or len(options) < 2 or "=" not in options[1]:
            print("machine_vm: bad option %r" % options[0], file=sys.stderr)
            return 2
        env.append(options[1])
        options = options[2:]
    if not shutil.which(QEMU):
        print("FAIL: %s missing (apt-get install qemu-system-x86)" % QEMU)
        return 125
    kernel = subprocess.run([os.path.join(SOURCE, "scripts", "numa-vm-kernel.sh"), CACHE],
                            capture_output=True, text=True)
    if kernel.returncode != 0:
        print("FAIL: no guest kernel: " + kernel.stderr.strip())
        return 125
    os.makedirs(out, exist_ok=True)
    for f in ("stdout", "rc"):
        if os.path.exists(os.path.join(out, f)):
            os.unlink(os.path.join(out, f))
    work = os.path.join(out, ".vm")
    os.makedirs(work, exist_ok=True)
    shares = host_shares([os.getcwd(), SOURCE] + command, out)
    for path in shares:
        if any(c in path for c in "\n,"):
            print("FAIL: %s lies in the guest's own /tmp, /dev/shm or /run and cannot be shared "
                  "(a comma or a newline in its name): move it elsewhere" % path)
            return 125
        print("machine-vm %s: sharing %s read-only (the guest has its own %s)"
              % (m.name, path, ", ".join(GUEST_PRIVATE)))
    initrd = build_initrd(work, shares)
    with open(os.path.join(out, "cmd.sh"), "w") as f:
        f.write("export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n")
        f.write("export HOME=/tmp TMPDIR=/tmp\n")
        for e in env:
            k, v = e.split("=", 1)
            f.write("export %s=%s\n" % (k, shlex.quote(v)))
        f.write("ip link set lo up 2>/dev/null\n")
        f.write("cd %s || exit 125\n" % shlex.quote(os.getcwd()))
        f.write(" ".join(shlex.quote(a) for a in command) + "\n")
    timeout = float(os.environ.get("TOPSYNC_MACHINE_VM_TIMEOUT", "2400"))
    accel = os.environ.get("TOPSYNC_MACHINE_VM_ACCEL", "auto")
    if accel not in ("auto", "kvm", "tcg"):
        print("FAIL: TOPSYNC_MACHINE_VM_ACCEL=%r is not valid; valid: auto, kvm, tcg" % accel)
        return 125
    kvm_record = os.path.join(CACHE, "kvm-failed")
    accels = [accel]
    if accel == "auto":
        accels = ["tcg"]
        if not os.access("/dev/kvm", os.R_OK | os.W_OK):
            print("machine-vm %s: no usable /dev/kvm: TCG" % m.name)
        elif os.path.exists(kvm_record):
            print("machine-vm %s: KVM not tried: it failed before (%s; remove %s to try again)"
                  % (m.name, open(kvm_record).read().strip(), kvm_record))
        else:
            accels = ["kvm", "tcg"]
    # A TCG guest stalled once in CI at the firmware's "Booting from ROM"
    # while the host's 2 CPUs ran MPI tests (the console stayed silent
    # until the 2400 s timeout): such a boot is abandoned after BOOT
    # seconds without a console line and tried once more.
    boot_stall = os.environ.get("TOPSYNC_MACHINE_VM_BOOT", "600")
    try:
        boot_stall = float(boot_stall)
        if not 10 <= boot_stall <= timeout:
            raise ValueError
    except ValueError:
        print("FAIL: TOPSYNC_MACHINE_VM_BOOT=%r is not valid; valid: seconds from 10 to the "
              "timeout (%.0f)" % (boot_stall, timeout))
        return 125
    if accels[-1] == "tcg":
        accels.append("tcg")
    start = time.time()
    open(os.path.join(work, "console.log"), "w").close()
    for attempt, accel in enumerate(accels):
        # a KVM guest gets KVM_BOOT seconds to come up before TCG takes over
        boot_deadline = (float(os.environ.get("TOPSYNC_MACHINE_VM_KVM_BOOT", "45"))
                         if accel == "kvm" and len(accels) > 1 else boot_stall)
        qmp = os.path.join(work, "qmp.sock")
        result, booted = run_guest(m, qemu_args(m, kernel.stdout.strip(), initrd, out, qmp, accel,
                                                     shares),
                                   work, qmp, accel, boot_deadline, timeout)
        if booted is not None or attempt == len(accels) - 1:
            if booted is None:
                print("FAIL: machine %s (%s): %s, %d tries" % (m.name, accel.upper(), result,
                                                                 attempt + 1))
            break
        if accel == "tcg":
            print("machine-vm %s: TCG guest did not come up (%s): booting it again"
                  % (m.name, result))
            continue
        print("machine-vm %s: KVM did not bring the guest up (%s): TCG instead" % (m.name, result))
        try:
            with open(kvm_record, "w") as f:
                f.write("%s, %s\n" % (result, time.strftime("%Y-%m-%d")))
        except OSError:
            pass
    elapsed = time.time() - start
    rc_path = os.path.join(out, "rc")
    if not os.path.exists(rc_path):
        print("FAIL: machine %s did not run the command; the console's end:" % m.name)
        with open(os.path.join(work, "console.log")) as f:
            print("".join(f.readlines()[-30:]))
        return 125
    with open(os.path.join(out, "stdout"), errors="replace") as f:
        sys.stdout.write(f.read())
    rc = int(open(rc_path).read().strip() or 125)
    print("machine-vm %s: exit %d after %.0f s (%s, boot %.0f s)"
          % (m.name, rc, elapsed, accel.upper(), booted or 0))
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv))
