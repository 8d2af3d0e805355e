#!/bin/sh
# A bad TOPSYNC_* value under the preloaded drop-in: one message on stderr
# naming the variable, and the program's barriers still work (glibc's).
# A bad value of a variable that is not the barriers' (RCL, collectives):
# one warning naming it, and the barriers stay topsync's (issue 56 item 6).
#   bad_environment.sh CONFORMANCE_BINARY LIBTOPSYNC_PTHREAD [PTHREAD_LOOP]
# (PTHREAD_LOOP: a plain pthread program, topsync-bench-pthread-loop, for
# TOPSYNC_VERBOSE=2, whose lines the conformance checks would not expect)
set -u
bin=$1 shim=$2 loop=${3:-}
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
# TOPSYNC_VERBOSE (issue 55 item 4): 1 is one start line and one summary
# at exit, whatever the number of barriers; 2 a line per barrier; a bad
# value one warning, the barriers still topsync's
verbose() { # VALUE EXPECTED_LINES PATTERN [PROGRAM ARGS]
    value=$1 expected=$2 pattern=$3
    shift 3
    [ $# -gt 0 ] || set -- "$bin" 2 2000
    err=$(env TOPSYNC_VERBOSE="$value" LD_PRELOAD="$shim" TOPSYNC_EXPECT=topsync "$@" 2>&1 >/dev/null)
    rc=$?
    lines=$(printf '%s\n' "$err" | grep -c "^libtopsync-pthread")
    ok_lines=$([ "$lines" = "$expected" ] && echo yes)
    if [ "$rc" != 0 ] || [ -z "$ok_lines" ] || ! printf '%s\n' "$err" | grep -q "$pattern"; then
        echo "FAIL TOPSYNC_VERBOSE=$value: exit $rc, $lines line(s), expected $expected and '$pattern': $(printf '%s\n' "$err" | head -5)"
        fail=1
    else
        echo "ok TOPSYNC_VERBOSE=$value: $lines line(s)"
    fi
}
verbose 1 2 "^libtopsync-pthread: summary: [1-9][0-9]* pthread barriers\? topsync's, [0-9]* glibc's"
verbose 1 2 "^libtopsync-pthread [0-9.]*: pthread barriers are topsync's"
verbose 3 1 "TOPSYNC_VERBOSE='3' is not valid; valid: 0 (silent), 1"
checks=9
if [ -n "$loop" ]; then # one barrier: its line and the summary
    verbose 2 2 "^libtopsync-pthread: pthread_barrier_init(count 2): [a-z-]*, wait " "$loop" 2 100 1
    checks=10
fi
[ "$fail" = 0 ] && echo "$checks passed, 0 failed"
exit "$fail"
