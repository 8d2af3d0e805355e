#!/bin/sh
# Section-3 man pages (scripts/man3.py, from the public headers): every
# function a topsync library exports has a page of its name, which man
# finds and renders without a warning.
#   man3_test.sh MAN_DIR LIBRARY...
set -u
dir=$1
shift
failed=0 passed=0
names=$(for lib in "$@"; do nm -D --defined-only "$lib"; done | awk '$2 == "T" {print $3}' |
        sed 's/@.*//' | grep '^topsync_' | sort -u)
[ -n "$names" ] || { echo "FAIL: no topsync_ function exported by $*"; exit 1; }
for fn in $names; do
    if [ -s "$dir/man3/$fn.3" ]; then
        passed=$((passed + 1))
    else
        echo "FAIL: $fn has no man page ($dir/man3/$fn.3): document it in its header"
        failed=$((failed + 1))
    fi
done
if command -v man >/dev/null; then
    for page in "$dir"/man3/topsync_*.3; do
        grep -q '^\.so ' "$page" && continue
        warnings=$(MANPATH=$dir LC_ALL=C.UTF-8 MANWIDTH=100 man --warnings -l "$page" 2>&1 >/dev/null)
        if [ -n "$warnings" ]; then
            echo "FAIL: $(basename "$page") renders with warnings: $warnings"
            failed=$((failed + 1))
        else
            passed=$((passed + 1))
        fi
    done
    MANPATH=$dir man -w topsync_barrier_create >/dev/null 2>&1 && passed=$((passed + 1)) ||
        { echo "FAIL: man -w topsync_barrier_create finds no page"; failed=$((failed + 1)); }
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
