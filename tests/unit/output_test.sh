#!/usr/bin/env bash
# Every output of the tools checked to the last byte (issue 37 item 4): a
# full disk or a file-size limit is a message and exit 1, never a 0-byte
# file with exit 0; an earlier file is left as it was; a file that is not
# an earlier output of the same kind is never overwritten.
set -u
info=$1
bench=$2
sim=$3
tune=$(dirname "$bench")/topsync-tune
passed=0
failed=0
ok() { passed=$((passed + 1)); }
ko() { failed=$((failed + 1)); echo "FAILED: $*" >&2; }
trap 'pkill -TERM -P $$; exit 143' TERM INT
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

short_barrier=(barrier --threads 2 --iterations 50 --runs 1 --peers none --algorithm mcs)
short_rcl=(rcl --threads 1 --array 4096 --ops 200 --runs 1 --pattern random --affinity none --locks rcl)
short_c2c=(c2c --iterations 50 --runs 1)

# standard output on a full device: status 1 and the reason
for cmd in "$info --np 2 --json" "$info --np 2" "$sim table" \
    "$sim barrier --np 2 --algorithm mcs --json" "$bench ${short_c2c[*]}" \
    "$bench ${short_barrier[*]} --json" "$bench ${short_rcl[*]} --json" "$tune --help"; do
    out=$($cmd 2>&1 >/dev/full)
    rc=$?
    [ $rc -eq 1 ] && grep -q ": error writing standard output: No space left on device" <<<"$out" &&
        ok || ko "$cmd > /dev/full: rc $rc '$out'"
done

# a file output that cannot be written whole (RLIMIT_FSIZE, SIGXFSZ ignored:
# write fails with EFBIG as on a full disk): status 1, the message, the
# earlier file intact and no temporary file left beside it
# (stderr through a pipe: the limit would stop a message written to a file)
limited() {
    (trap '' XFSZ; ulimit -f 0; "$@" 2>&1 >/dev/null) | cat >"$dir/err"
    return "${PIPESTATUS[0]}"
}
check_limited() { # what file header command...
    local what=$1 file=$2 header=$3
    shift 3
    printf '%s\n' "$header" >"$file"
    limited "$@"
    local rc=$?
    [ $rc -eq 1 ] && grep -q "cannot write $file: File too large; any earlier file" "$dir/err" &&
        [ "$(cat "$file")" = "$header" ] && [ -z "$(ls "$dir" | grep '\.tmp\.')" ] &&
        ok || ko "$what under a size limit: rc $rc '$(cat "$dir/err")' file '$(cat "$file")'"
}
check_limited "barrier --output" "$dir/b.json" '[{"earlier": 1}]' "$bench" "${short_barrier[@]}" --output "$dir/b.json"
check_limited "rcl --output" "$dir/r.json" '[]' "$bench" "${short_rcl[@]}" --output "$dir/r.json"
check_limited "rcl --csv" "$dir/r.csv" 'lock,pattern,threads,alloc,init,affinity,mops' \
    "$bench" "${short_rcl[@]}" --csv "$dir/r.csv"
check_limited "c2c --output" "$dir/c.csv" '' "$bench" "${short_c2c[@]}" --output "$dir/c.csv"
check_limited "sim --output" "$dir/s.json" '[]' "$sim" barrier --np 2 --algorithm mcs --output "$dir/s.json"

# a file that is not an earlier output of that kind is not overwritten, and
# the tool says so before it measures
printf 'int main(void) { return 0; }\n' >"$dir/main.c"
for cmd in "$bench ${short_barrier[*]} --output $dir/main.c" "$bench ${short_rcl[*]} --output $dir/main.c" \
    "$bench ${short_rcl[*]} --csv $dir/main.c" "$bench ${short_c2c[*]} --output $dir/main.c" \
    "$sim barrier --np 2 --algorithm mcs --output $dir/main.c"; do
    out=$($cmd 2>&1 >/dev/null)
    rc=$?
    [ $rc -eq 1 ] && grep -q "$dir/main.c exists and is not a .*; not overwritten" <<<"$out" &&
        grep -q "int main" "$dir/main.c" && ok || ko "$cmd: rc $rc '$out'"
done
out=$("$bench" "${short_barrier[@]}" --output "$dir" 2>&1 >/dev/null)
[ $? -eq 1 ] && grep -q "cannot write $dir: a directory" <<<"$out" && ok || ko "output to a directory: '$out'"
# a device is written in place, and checked: /dev/stdout works, /dev/full fails
out=$("$sim" barrier --np 2 --algorithm mcs --output /dev/stdout 2>&1 >/dev/null)
[ $? -eq 0 ] && [ -z "$out" ] && ok || ko "--output /dev/stdout: '$out'"
out=$("$sim" barrier --np 2 --algorithm mcs --output /dev/full 2>&1 >/dev/null)
[ $? -eq 1 ] && grep -q "cannot write /dev/full: No space left on device$" <<<"$out" && ok ||
    ko "--output /dev/full: '$out'"
out=$("$bench" "${short_barrier[@]}" --output "$dir/missing/b.json" 2>&1 >/dev/null)
[ $? -eq 1 ] && grep -q "cannot write $dir/missing/b.json: $dir/missing: No such file" <<<"$out" &&
    ok || ko "output into a missing directory: '$out'"

# an earlier output of the same kind is replaced, with the usual mode
rm -f "$dir"/*
for i in 1 2; do
    "$bench" "${short_barrier[@]}" --output "$dir/b.json" >/dev/null &&
        "$bench" "${short_rcl[@]}" --output "$dir/r.json" --csv "$dir/r.csv" >/dev/null &&
        "$bench" "${short_c2c[@]}" --output "$dir/c.csv" &&
        "$sim" barrier --np 2 --algorithm mcs --output "$dir/s.json" >/dev/null &&
        ok || ko "writing the outputs, pass $i"
done
python3 -c 'import json, sys; [json.load(open(f)) for f in sys.argv[1:]]' "$dir/b.json" "$dir/r.json" \
    "$dir/s.json" && head -1 "$dir/r.csv" | grep -q "^lock,pattern" && [ -s "$dir/c.csv" ] && ok ||
    ko "outputs written whole"
[ "$(stat -c %a "$dir/b.json")" = "$(umask -S >/dev/null; printf '%o' $((0666 & ~$(umask))))" ] && ok ||
    ko "output mode $(stat -c %a "$dir/b.json") against umask $(umask)"

# a real full file system, where this machine lets us mount one
if unshare -m true 2>/dev/null; then
    out=$(unshare -m bash -c '
        mount -t tmpfs -o size=64k tmpfs "$1" || exit 77
        echo "[1]" >"$1/b.json"
        head -c 1M /dev/zero >"$1/fill" 2>/dev/null
        "$2" barrier --threads 2 --iterations 50 --runs 1 --peers none --algorithm mcs \
            --output "$1/b.json" >/dev/null
        echo "rc=$? kept=$(cat "$1/b.json")"' _ "$dir" "$bench" 2>&1)
    rc=$?
    if [ $rc -eq 77 ]; then
        echo "note: no tmpfs mount here; the size-limit checks above stand for a full disk"
    else
        grep -q "No space left on device; any earlier file" <<<"$out" && grep -q "rc=1 kept=\[1\]" <<<"$out" &&
            ok || ko "full tmpfs: '$out'"
    fi
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
