#!/bin/sh
# Fetch and unpack the Debian kernel the emulated-machine tests boot
# (tests/numa-vm, tests/machine-vm) into DIR (default:
# /var/cache/topsync-numa-vm), with the modules a guest needs to mount the
# host's root over 9p (virtio-pci, 9pnet_virtio, 9p) in DIR/modules, in load
# order (DIR/modules/order). Prints the vmlinuz path. Needs Debian's package
# index (apt-get update) on the first call only.
set -eu
dir=${1:-/var/cache/topsync-numa-vm}
mkdir -p "$dir"
modules="drivers/virtio/virtio_ring drivers/virtio/virtio drivers/virtio/virtio_pci_legacy_dev
drivers/virtio/virtio_pci_modern_dev drivers/virtio/virtio_pci net/9p/9pnet net/9p/9pnet_virtio
fs/netfs/netfs fs/fscache/fscache fs/9p/9p"
found=$(ls "$dir"/root/boot/vmlinuz-* 2>/dev/null | head -n 1 || true)
if [ -z "$found" ] || [ ! -s "$dir/modules/order" ]; then
    pkg=$(apt-cache depends linux-image-amd64 | sed -n 's/.*Depends: \(linux-image-[^ ]*\)/\1/p' | head -n 1)
    [ -n "$pkg" ] || { echo "numa-vm-kernel: no linux-image-amd64 in the apt index" >&2; exit 1; }
    # (apt warns that it downloads unsandboxed as root: harmless)
    (cd "$dir" && rm -f ./*.deb && apt-get download "$pkg" >/dev/null 2>"$dir/apt.log") ||
        { cat "$dir/apt.log" >&2; exit 1; }
    rm -rf "$dir/root" "$dir/modules"
    dpkg-deb -x "$dir"/"$pkg"_*.deb "$dir/root"
    mkdir -p "$dir/modules"
    : > "$dir/modules/order.tmp"
    for m in $modules; do
        ko=$(ls "$dir"/root/lib/modules/*/kernel/"$m".ko) ||
            { echo "numa-vm-kernel: $pkg has no $m.ko" >&2; exit 1; }
        cp "$ko" "$dir/modules/"
        basename "$ko" >> "$dir/modules/order.tmp"
    done
    mv "$dir/modules/order.tmp" "$dir/modules/order"
    rm -rf "$dir"/*.deb "$dir/root/lib" "$dir/root/usr" # only the kernel image is booted
    found=$(ls "$dir"/root/boot/vmlinuz-* | head -n 1)
fi
echo "$found"
