#!/bin/sh
# scripts/conditions_report.py, conditions.sh's table and main.sh's
# busy-node figure: from records as topsync-bench barrier --json writes
# them (one file per command, KIND-P-BIND-NOISE-REACTIVE.json) it prints a
# row per condition with the ratios to glibc and libgomp, reactive on and
# off, and the drop-in's; --plot writes a PNG; a directory without
# records and bad arguments are refused. Skipped (77) without matplotlib.
#   conditions_report_test.sh SOURCE_DIR
set -u
src=$1
py=/usr/bin/python3
[ -x "$py" ] || py=python3
"$py" -c 'import matplotlib' 2>/dev/null || { echo "SKIPPED: no matplotlib"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# record KIND P BIND NOISE REACTIVE AUTO_NS GLIBC_NS [OMP_NS PROGRAM_NS PRELOADED_NS]
record() {
    {
        echo "[{\"algorithm\": \"auto\", \"kind\": \"$1\", \"participants\": $2, \"bind\": \"$3\", \"noise\": $4, \"median_ns\": $6, \"resolved\": \"dissemination\", \"switches\": 3},"
        echo " {\"algorithm\": \"peer:pthread\", \"kind\": \"$1\", \"participants\": $2, \"bind\": \"$3\", \"noise\": $4, \"median_ns\": $7}"
        [ $# -gt 7 ] && echo ",{\"algorithm\": \"peer:omp\", \"kind\": \"$1\", \"participants\": $2, \"bind\": \"$3\", \"noise\": $4, \"median_ns\": $8},
 {\"algorithm\": \"peer:pthread-program\", \"kind\": \"$1\", \"participants\": $2, \"bind\": \"$3\", \"noise\": $4, \"median_ns\": $9},
 {\"algorithm\": \"preload:pthread-program\", \"kind\": \"$1\", \"participants\": $2, \"bind\": \"$3\", \"noise\": $4, \"median_ns\": ${10}}"
        echo "]"
    } > "$tmp/$1-$2-$3-$4-$5.json"
}
record threads 2 core 0 on 100 400 200 500 50
record threads 2 core 0 off 120 400 200 500 50
record threads 2 none 2 on 1000 4000 500 5000 2500
record threads 2 none 2 off 8000 4000 500 5000 2500
record processes 2 none 2 on 300 600
record processes 2 none 2 off 300 600
fail=0
out=$("$py" "$src/scripts/conditions_report.py" "$tmp" --plot "$tmp/c.png" "test" 2>"$tmp/err")
for row in \
    "| 2 threads | bound, idle | 100.0 (dissemination, 3 switches) | 400.0 | 200.0 | 0.25 | 0.50 | 0.30 | 0.10 |" \
    "| 2 threads | unbound, 2 busy neighbour processes | 1000.0 (dissemination, 3 switches) | 4000.0 | 500.0 | 0.25 | 2.00 | 2.00 | 0.50 |" \
    "| 2 processes | unbound, 2 busy neighbour processes | 300.0 (dissemination, 3 switches) | 600.0 | - | 0.50 | - | 0.50 | - |"; do
    printf '%s\n' "$out" | grep -qxF "$row" || { echo "FAIL: no row '$row' in: $out"; fail=1; }
done
[ "$(printf '%s\n' "$out" | grep -c '^| 2 ')" = 3 ] || { echo "FAIL: not 3 rows: $out"; fail=1; }
grep -q "wrote $tmp/c.png (2 panels, " "$tmp/err" || { echo "FAIL: no figure said: $(cat "$tmp/err")"; fail=1; }
[ "$(head -c 4 "$tmp/c.png" | od -An -c | tr -d ' ')" = "211PNG" ] || { echo "FAIL: no PNG written"; fail=1; }
mkdir "$tmp/empty"
out=$("$py" "$src/scripts/conditions_report.py" "$tmp/empty" 2>&1)
[ $? -ne 0 ] && echo "$out" | grep -q "no conditions.sh records in $tmp/empty" ||
    { echo "FAIL: an empty directory was not refused: $out"; fail=1; }
out=$("$py" "$src/scripts/conditions_report.py" "$tmp" --plt "$tmp/d.png" "test" 2>&1)
[ $? -ne 0 ] && echo "$out" | grep -q "usage: conditions_report.py DIR" ||
    { echo "FAIL: a bad option was not refused: $out"; fail=1; }
[ $fail = 0 ] && echo "7 passed, 0 failed"
exit $fail
