#!/bin/sh
# The layering check must catch what it is for: a copy of src/ with one
# upward include (base/error.c including an RCL header) has to fail it.
set -u
here=$(dirname "$0")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$1" "$tmp/src"
echo '#include "rcl/rcl_private.h"' >> "$tmp/src/base/error.c"
out=$(python3 "$here/check_layers.py" "$tmp/src" 2>&1)
if [ $? -ne 0 ] && echo "$out" | grep -q "upward include: base/error.c (base) includes rcl/rcl_private.h"; then
    echo "PASS: an upward include is caught: $out"
else
    echo "FAIL: an upward include was not caught: $out"
    exit 1
fi
