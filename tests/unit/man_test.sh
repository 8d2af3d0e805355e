#!/usr/bin/env bash
# The man pages (docs/man, built into BUILD/man): each renders without a
# groff warning, each tool's page holds its usage (its OPTIONS are its
# --help), and topsync(7) names every TOPSYNC_* variable topsync knows
# (src/base/env.c's list, the one the typo warning checks against).
#   man_test.sh BUILD_DIR SOURCE_DIR
set -u
build=$1 src=$2
passed=0 failed=0
ok() { passed=$((passed + 1)); }
ko() { failed=$((failed + 1)); echo "FAILED: $*" >&2; }
command -v groff >/dev/null || { echo "FAILED: no groff (Debian groff-base)"; exit 1; }
for page in topsync.7 topsync-info.1 topsync-bench.1 topsync-sim.1 topsync-tune.1; do
    file=$build/man/$page
    [ -s "$file" ] || { ko "$page was not built"; continue; }
    warnings=$(groff -man -Tutf8 -ww -z "$file" 2>&1)
    [ -z "$warnings" ] && ok || ko "$page: groff warns: $warnings"
    text=$(groff -man -Tutf8 "$file" 2>/dev/null | sed 's/.\x08//g')
    grep -q "^NAME" <<<"$text" && ok || ko "$page renders without a NAME section"
    case $page in *.1)
        tool=${page%.1}
        grep -q "usage: $tool" <<<"$text" && ok || ko "$page lacks the tool's usage (OPTIONS)" ;;
    esac
done
# every known variable in topsync(7)
vars=$(sed -n '/known_variables\[\] = {/,/NULL};/p' "$src/src/base/env.c" | grep -o '"TOPSYNC_[A-Z0-9_]*"' | tr -d '"')
[ "$(wc -w <<<"$vars")" -ge 20 ] && ok || ko "could not read env.c's variable list"
seven=$(cat "$build/man/topsync.7" 2>/dev/null)
for v in $vars; do
    grep -qw "$v" <<<"$seven" && ok || ko "topsync(7) does not name $v"
done
echo "$passed passed, $failed failed"
[ $failed = 0 ]
