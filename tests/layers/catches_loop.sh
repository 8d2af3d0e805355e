#!/bin/sh
# The layering check must catch two object files of one library that use
# each other's symbols (what nm shows), even inside one layer: a scratch
# library of two files in one folder, each calling the other, has to fail
# it; the same two with only one call has to pass.
set -u
here=$(dirname "$0")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/lib/node" "$tmp/obj/node"
printf 'void ts_b(void);\nvoid ts_a(void) { ts_b(); }\n' > "$tmp/lib/node/a.c"
printf 'void ts_a(void);\nvoid ts_b(void) { ts_a(); }\n' > "$tmp/lib/node/b.c"
for f in a b; do cc -c "$tmp/lib/node/$f.c" -o "$tmp/obj/node/$f.c.o" || exit 1; done
out=$(python3 "$here/check_layers.py" --layers node "$tmp/lib" "$tmp/obj" 2>&1)
if [ $? -ne 0 ] && echo "$out" | grep -q "loop of files by references: node/a.c, node/b.c"; then
    echo "PASS: two files using each other's symbols are caught: $out"
else
    echo "FAIL: two files using each other's symbols were not caught: $out"
    exit 1
fi
printf 'void ts_b(void) { }\n' > "$tmp/lib/node/b.c"
cc -c "$tmp/lib/node/b.c" -o "$tmp/obj/node/b.c.o" || exit 1
out=$(python3 "$here/check_layers.py" --layers node "$tmp/lib" "$tmp/obj" 2>&1)
if [ $? -eq 0 ]; then
    echo "PASS: a call one way is let be: $out"
else
    echo "FAIL: a call one way was refused: $out"
    exit 1
fi
