#!/bin/sh
# A bad TOPSYNC_* value under the preloaded drop-in: one message on stderr
# naming the variable, and the program's barriers still work (glibc's).
# A bad value of a variable that is not the barriers' (RCL, collectives):
# one warning naming it, and the barriers stay topsync's (issue 56 item 6).
#   bad_environment.sh CONFORMANCE_BINARY LIBTOPSYNC_PTHREAD
set -u
bin=$1 shim=$2
fail=0
for setting in TOPSYNC_BARRIER=bogus TOPSYNC_WAIT=sometimes TOPSYNC_SPIN=-3 TOPSYNC_TIMEOUT=soon; do
    err=$(env "$setting" LD_PRELOAD="$shim" TOPSYNC_EXPECT=glibc "$bin" 2 2000 2>&1 >/dev/null)
    rc=$?
    var=${setting%%=*}
    lines=$(printf '%s\n' "$err" | grep -c "libtopsync-pthread: .*$var")
    if [ "$rc" != 0 ] || [ "$lines" != 1 ]; then
        echo "FAIL $setting: exit $rc, $lines message line(s): $err"
        fail=1
    else
        echo "ok $setting: $(printf '%s\n' "$err" | head -1)"
    fi
done
for setting in TOPSYNC_RCL_PLACEMENT=bogus TOPSYNC_COLL_MAX_BYTES=4k; do
    err=$(env "$setting" LD_PRELOAD="$shim" TOPSYNC_EXPECT=topsync "$bin" 2 2000 2>&1 >/dev/null)
    rc=$?
    var=${setting%%=*}
    lines=$(printf '%s\n' "$err" | grep -c "libtopsync-pthread: warning: .*$var.*not used by pthread barriers")
    if [ "$rc" != 0 ] || [ "$lines" != 1 ]; then
        echo "FAIL $setting: exit $rc, $lines warning line(s): $err"
        fail=1
    else
        echo "ok $setting: $(printf '%s\n' "$err" | head -1)"
    fi
done
[ "$fail" = 0 ] && echo "6 passed, 0 failed"
exit "$fail"
