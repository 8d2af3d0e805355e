#!/bin/sh
# Runs one libFuzzer target for a bounded time and, when it fails, prints
# the input that made it fail (hex and as a C string) and the command that
# replays it: a CI log is often all there is of a fuzz failure.
#
#   run_fuzz.sh FUZZER SECONDS SEED ARTIFACT_DIR CORPUS...
#
# SEED 0 lets libFuzzer pick one (printed as "Seed:"); CI passes a fixed
# seed so that a red run replays the same inputs (TOPSYNC_FUZZ_SEED).
set -u
fuzzer=$1 seconds=$2 seed=$3 artifacts=$4
shift 4
mkdir -p "$artifacts"
rm -f "$artifacts"/crash-* "$artifacts"/timeout-* "$artifacts"/leak-* "$artifacts"/oom-* \
      "$artifacts"/slow-unit-*
seed_flag=
[ "$seed" != 0 ] && seed_flag="-seed=$seed"
# a cache directory of its own: auto's model cache and tuning files of the
# user (or of the tests before) neither steer nor receive the inputs
rm -rf "$artifacts/cache" "$artifacts/verdict.txt"
mkdir -p "$artifacts/cache"
# leaks inside libhwloc itself are hwloc's (lsan.supp says which)
XDG_CACHE_HOME=$artifacts/cache ASAN_OPTIONS=detect_leaks=1 \
    LSAN_OPTIONS=suppressions="$(dirname "$0")/lsan.supp" "$fuzzer" $seed_flag \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
    -artifact_prefix="$artifacts/" "$@" > "$artifacts/fuzz.log" 2>&1
rc=$?
cat "$artifacts/fuzz.log"
[ "$rc" = 0 ] && exit 0
for input in "$artifacts"/crash-* "$artifacts"/timeout-* "$artifacts"/leak-* "$artifacts"/oom-*; do
    [ -f "$input" ] || continue
    echo "== failing input $input ($(wc -c < "$input") bytes; first byte picks the parser) =="
    od -A d -t x1 -v "$input" | head -40
    printf 'as a C string: "'
    od -A n -t o1 -v "$input" | tr -s ' \n' '  ' | sed 's/ *$//; s/ \([0-7][0-7]*\)/\\\1/g'
    echo '"'
    echo "replay: $fuzzer $input"
done
# last, where a log's tail shows it (scripts/test.sh prints it again): what
# libFuzzer and the sanitizers said went wrong, and the input
{
    echo "run_fuzz: FAILED (exit $rc):"
    grep -E "^==[0-9]+==(ERROR|WARNING)|^SUMMARY:|ALARM:|out-of-memory|Timeout|fuzz_parsers: |deadly signal" \
        "$artifacts/fuzz.log" | head -n 8
    for input in "$artifacts"/crash-* "$artifacts"/timeout-* "$artifacts"/leak-* "$artifacts"/oom-*; do
        [ -f "$input" ] || continue
        printf 'input %s: "' "$(basename "$input")"
        od -A n -t o1 -v "$input" | tr -s ' \n' '  ' | sed 's/ *$//; s/ \([0-7][0-7]*\)/\\\1/g'
        echo '"'
    done
} | tee "$artifacts/verdict.txt"
exit "$rc"
