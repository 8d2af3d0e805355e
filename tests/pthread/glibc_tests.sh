#!/usr/bin/env bash
# glibc 2.36's own pthread_barrier tests (sysdeps/pthread/tst-barrier1..4:
# count 0 refused, the serial thread, process-shared barriers across fork,
# 20 threads x 20 rounds, a barrier reused at once), built here with a
# skeleton of our own (glibc_test_skeleton.c) and run natively, with the
# pthread drop-in preloaded, and preloaded with a reactive barrier
# switching configuration at every decision (TOPSYNC_REACTIVE=every:1)
# under each wait policy. Each must pass where it passes natively, and the
# drop-in must have served the threads' barriers (its TOPSYNC_VERBOSE=1
# summary). Skipped (77), saying so, without the suite
# (scripts/setup-suites.sh puts it in /var/cache/topsync-suites).
#   glibc_tests.sh SHIM
set -u
shim=$1
suite=${TOPSYNC_SUITES:-/var/cache/topsync-suites}/glibc-2.36/sysdeps/pthread
if [ ! -f "$suite/tst-barrier1.c" ]; then
    echo "SKIPPED: no glibc 2.36 barrier tests in $suite (scripts/setup-suites.sh)"
    exit 77
fi
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/t"
cp "$here/glibc_test_skeleton.c" "$tmp/test-skeleton.c" # "../test-skeleton.c" from t/
passed=0 failed=0
ok() { passed=$((passed + 1)); }
ko() { failed=$((failed + 1)); echo "FAILED: $*"; }
for n in 1 2 3 4; do
    cp "$suite/tst-barrier$n.c" "$tmp/t/"
    cc -O2 -D_GNU_SOURCE -w -o "$tmp/tst-barrier$n" "$tmp/t/tst-barrier$n.c" -pthread ||
        { ko "tst-barrier$n does not build"; continue; }
    out=$("$tmp/tst-barrier$n" 2>&1)
    rc=$?
    [ $rc -eq 0 ] && ok || { ko "tst-barrier$n natively: rc $rc: $out"; continue; }
    for env in "" "TOPSYNC_REACTIVE=every:1 TOPSYNC_WAIT=spin" \
        "TOPSYNC_REACTIVE=every:1 TOPSYNC_WAIT=yield" "TOPSYNC_REACTIVE=every:1 TOPSYNC_WAIT=block"; do
        out=$(env $env TOPSYNC_VERBOSE=1 LD_PRELOAD="$shim" "$tmp/tst-barrier$n" 2>&1)
        rc=$?
        [ $rc -eq 0 ] && ok || { ko "tst-barrier$n preloaded ($env): rc $rc: $(tail -3 <<<"$out")"; continue; }
        # served by topsync: every test but the process-shared one (2),
        # whose barriers go to glibc by design (docs/guide/pthread.md)
        served=$(sed -nE 's/^libtopsync-pthread: summary: ([0-9]+) pthread barriers? topsync.s.*/\1/p' <<<"$out")
        if [ "$n" = 2 ]; then # a summary from the parent and from its child
            ! grep -qv '^0$' <<<"$served" && ok ||
                ko "tst-barrier2 ($env): topsync served a process-shared barrier: $out"
        else
            [ -n "$served" ] && [ "$served" -gt 0 ] && ok ||
                ko "tst-barrier$n ($env): the drop-in served none: $(grep libtopsync <<<"$out")"
        fi
    done
done
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
