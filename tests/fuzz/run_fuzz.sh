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
ASAN_OPTIONS=detect_leaks=1 "$fuzzer" $seed_flag -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$artifacts/" "$@"
rc=$?
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
exit "$rc"
