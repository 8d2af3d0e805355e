#!/usr/bin/env bash
# scripts/slow_runs.sh: a table row per build with every run counted, and
# bad values refused with a message naming the valid ones (exit 2). No
# figure is asserted: the runs are timed on a shared machine.
#   usage: slow_runs_test.sh SOURCE_DIR BUILD_DIR
set -u
src=$1 build=$2
script=$src/scripts/slow_runs.sh
passed=0 failed=0
ok() { passed=$((passed + 1)); }
ko() { failed=$((failed + 1)); echo "FAILED: $*" >&2; }
refused() { # refused WHAT PATTERN ENV...
    local what=$1 pattern=$2
    shift 2
    local out rc
    out=$(env "$@" "$script" "$build" 2>&1)
    rc=$?
    [ $rc -eq 2 ] && grep -q -- "$pattern" <<<"$out" && ok || ko "$what: rc $rc, $out"
}
refused "LIBS unset" "LIBS is required" LIBS=
refused "LIBS without a directory" "is not NAME:DIR" LIBS=x
refused "LIBS with no library" "no /nonexistent/libtopsync.so" LIBS=a:/nonexistent
refused "SETS=0" "SETS='0' is not valid; valid: a whole number from 1" LIBS=a:$build SETS=0
refused "SLOW_NS=1k" "SLOW_NS='1k' is not valid" LIBS=a:$build SLOW_NS=1k
out=$(LIBS="one:$build two:$build" SETS=2 ARGS="--threads 2 --bind none --iterations 200 --runs 3" \
    "$script" "$build" 2>&1)
rc=$?
[ $rc -eq 0 ] && ok || ko "a run: rc $rc, $out"
for name in one two; do # 2 commands of 3 runs each
    grep -qE "^\| $name \| 6 \| [0-6] \| [0-9]+ \| [0-9]+ \| [0-9]+ \| [0-9]+ \| [0-9]+ \|$" <<<"$out" && ok ||
        ko "no row for build $name with 6 runs: $out"
done
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
