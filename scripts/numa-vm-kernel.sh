#!/bin/sh
# Fetch and unpack the Debian kernel the NUMA-VM test boots (tests/numa-vm),
# into DIR (default: /var/cache/topsync-numa-vm). Prints the vmlinuz path.
# Needs Debian's package index (apt-get update) on the first call only.
set -eu
dir=${1:-/var/cache/topsync-numa-vm}
mkdir -p "$dir"
found=$(ls "$dir"/root/boot/vmlinuz-* 2>/dev/null | head -n 1 || true)
if [ -z "$found" ]; then
    pkg=$(apt-cache depends linux-image-amd64 | sed -n 's/.*Depends: \(linux-image-[^ ]*\)/\1/p' | head -n 1)
    [ -n "$pkg" ] || { echo "numa-vm-kernel: no linux-image-amd64 in the apt index" >&2; exit 1; }
    # (apt warns that it downloads unsandboxed as root: harmless)
    (cd "$dir" && rm -f ./*.deb && apt-get download "$pkg" >/dev/null 2>"$dir/apt.log") ||
        { cat "$dir/apt.log" >&2; exit 1; }
    dpkg-deb -x "$dir"/"$pkg"_*.deb "$dir/root"
    rm -rf "$dir"/*.deb "$dir/root/lib" "$dir/root/usr" # only the kernel image is booted
    found=$(ls "$dir"/root/boot/vmlinuz-* | head -n 1)
fi
echo "$found"
