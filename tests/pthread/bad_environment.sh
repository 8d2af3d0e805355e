#!/bin/sh
# A bad TOPSYNC_* value under the preloaded drop-in: one message on stderr
# naming the variable, and the program's barriers still work (glibc's).
# A bad value of a variable that is not the barriers' (RCL, collectives):
# one warning naming it, and the barriers stay topsync's (issue 56 item 6).
#   bad_environment.sh CONFORMANCE_BINARY LIBTOPSYNC_PTHREAD
set -u
bin=$1 shim=$2
fail=0
# try SETTING EXPECT PATTERN NOUN: the run must exit 0 with EXPECT's
# implementation and print one line matching PATTERN (VAR: the variable)
try() {
    setting=$1 expect=$2 noun=$4
    var=${setting%%=*}
    pattern=$(printf '%s' "$3" | sed "s/VAR/$var/")
    err=$(env "$setting" LD_PRELOAD="$shim" TOPSYNC_EXPECT="$expect" "$bin" 2 2000 2>&1 >/dev/null)
    rc=$?
    lines=$(printf '%s\n' "$err" | grep -c "$pattern")
    if [ "$rc" != 0 ] || [ "$lines" != 1 ]; then
        echo "FAIL $setting: exit $rc, $lines $noun line(s): $err"
        fail=1
    else
        echo "ok $setting: $(printf '%s\n' "$err" | head -1)"
    fi
}
for setting in TOPSYNC_BARRIER=bogus TOPSYNC_WAIT=sometimes TOPSYNC_SPIN=-3 TOPSYNC_TIMEOUT=soon; do
    try "$setting" glibc "libtopsync-pthread: .*VAR" message
done
for setting in TOPSYNC_RCL_PLACEMENT=bogus TOPSYNC_COLL_MAX_BYTES=4k; do
    try "$setting" topsync "libtopsync-pthread: warning: .*VAR.*not used by pthread barriers" warning
done
[ "$fail" = 0 ] && echo "6 passed, 0 failed"
exit "$fail"
