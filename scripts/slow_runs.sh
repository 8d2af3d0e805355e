#!/usr/bin/env bash
# How often topsync's default barrier has a slow run, for builds of the
# library side by side (issue 35, "Two sleepers"): the same topsync-bench
# command under each build's libtopsync.so in turn (LD_LIBRARY_PATH over
# the binary's RUNPATH), SETS times interleaved, the order turned round
# every other set, every run of the auto row kept; a Markdown table per
# build: runs, runs slower than SLOW_NS per barrier, median, 90th
# percentile, largest and mean of the runs, and glibc's median in the
# same commands (how the host behaved). The median alone hides a mode
# that only some runs fall into.
#
#   usage: scripts/slow_runs.sh [BUILD_DIR]
#   environment: LIBS (required: "NAME:DIR ...", DIR holding a
#   libtopsync.so, e.g. "before:/tmp/old after:build", built with the same
#   soname version), SETS (default
#   10), SLOW_NS (default 1000), ARGS (default "--threads 2 --bind core
#   --iterations 20000 --runs 5")
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(readlink -f "${1:-build}")
bench=$build/bench/topsync-bench
sets=${SETS:-10} slow=${SLOW_NS:-1000}
args=${ARGS:---threads 2 --bind core --iterations 20000 --runs 5}
fail() { echo "slow_runs.sh: $*" >&2; exit 2; }
[ -x "$bench" ] || fail "no $bench: build first (scripts/build.sh)"
[ -n "${LIBS:-}" ] || fail "LIBS is required: \"NAME:DIR ...\", each DIR holding a libtopsync.so"
[[ $sets =~ ^[1-9][0-9]*$ ]] || fail "SETS='$sets' is not valid; valid: a whole number from 1"
[[ $slow =~ ^[1-9][0-9]*$ ]] || fail "SLOW_NS='$slow' is not valid; valid: a whole number from 1"
for entry in $LIBS; do
    name=${entry%%:*} dir=${entry#*:}
    [ -n "$name" ] && [ "$name" != "$entry" ] || fail "LIBS entry '$entry' is not NAME:DIR"
    [ -e "$dir/libtopsync.so" ] || fail "LIBS entry '$entry': no $dir/libtopsync.so"
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# the order turns round every set: the second command of a pair beside busy
# neighbours ran slower, glibc's row in it too (2-thread rows: medians 2.1
# against 10.9 us whichever build came second)
forward=$LIBS backward=$(printf '%s\n' $LIBS | tac | tr '\n' ' ')
for set in $(seq "$sets"); do
    order=$forward
    [ $((set % 2)) -eq 0 ] && order=$backward
    for entry in $order; do
        name=${entry%%:*} dir=$(readlink -f "${entry#*:}")
        # shellcheck disable=SC2086 # ARGS is a list of options
        LD_LIBRARY_PATH=$dir "$bench" barrier $args --algorithm auto --peers pthread --json |
            tr -d '\n' >>"$tmp/$name.jsonl"
        echo >>"$tmp/$name.jsonl"
    done
done
echo "$args; $sets commands per build, interleaved, the order turned round every other set;"
echo "slow: over $slow ns per barrier"
echo
echo "| build | runs | slow runs | median ns | p90 ns | largest ns | mean ns | glibc median ns |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for entry in $LIBS; do
    python3 - "$tmp/${entry%%:*}.jsonl" "${entry%%:*}" "$slow" <<'PY'
import json, sys
path, name, slow = sys.argv[1], sys.argv[2], int(sys.argv[3])
ours, glibc = [], []
for line in open(path):
    for row in json.loads(line):
        if row["algorithm"] == "auto":
            ours += row["runs_ns"]
        elif row["algorithm"] == "peer:pthread":
            glibc += row["runs_ns"]
ours.sort()
glibc.sort()
def at(v, q):
    return v[min(len(v) - 1, int(len(v) * q))] if v else float("nan")
print(f"| {name} | {len(ours)} | {sum(x > slow for x in ours)} | {at(ours, 0.5):.0f} "
      f"| {at(ours, 0.9):.0f} | {max(ours):.0f} | {sum(ours) / len(ours):.0f} | {at(glibc, 0.5):.0f} |")
PY
done
