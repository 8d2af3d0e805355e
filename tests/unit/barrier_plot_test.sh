#!/bin/sh
# scripts/barrier_plot.py, main.sh's latency-against-participants figure:
# from topsync-bench barrier's JSON of 2 and 4 threads it writes a PNG
# with a line per algorithm and peer; it refuses files without thread
# records, naming them. Skipped (77) without matplotlib.
#   barrier_plot_test.sh TOPSYNC_BENCH SOURCE_DIR
set -u
bench=$1 src=$2
py=/usr/bin/python3
[ -x "$py" ] || py=python3
"$py" -c 'import matplotlib' 2>/dev/null || { echo "SKIPPED: no matplotlib"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for n in 2 4; do
    "$bench" barrier --threads $n --iterations 200 --runs 1 --peers pthread \
        --output "$tmp/b$n.json" >/dev/null 2>&1 || { echo "FAIL: topsync-bench barrier --threads $n"; exit 1; }
done
# an MPI's own barrier, as topsync-bench barrier --mpi --algorithm none
# writes it: one more series, at 8 ranks
echo '[{"algorithm": "peer:mpi", "participants": 8, "wait": "native", "latency_ns": 900.0, "median_ns": 900.0, "iterations": 1000, "mpi": "openmpi", "label": ""}]' > "$tmp/m8.json"
out=$("$py" "$src/scripts/barrier_plot.py" "$tmp/p.png" "test" "$tmp/b2.json" "$tmp/b4.json")
case $out in *"wrote $tmp/p.png ("*" series, participants 2, 4)") ;;
    *) echo "FAIL: barrier_plot.py said: $out"; exit 1 ;; esac
series=${out#*(}; series=${series%% series*}
out=$("$py" "$src/scripts/barrier_plot.py" "$tmp/p.png" "test" "$tmp/b2.json" "$tmp/b4.json" "$tmp/m8.json")
case $out in *"wrote $tmp/p.png ($((series + 1)) series, participants 2, 4, 8)") ;;
    *) echo "FAIL: barrier_plot.py with an MPI's barrier said: $out"; exit 1 ;; esac
[ "$(head -c 4 "$tmp/p.png" | od -An -c | tr -d ' ')" = "211PNG" ] || { echo "FAIL: no PNG written"; exit 1; }
echo '[]' > "$tmp/empty.json"
out=$("$py" "$src/scripts/barrier_plot.py" "$tmp/q.png" "test" "$tmp/empty.json" 2>&1)
[ $? -ne 0 ] && echo "$out" | grep -q "no thread or MPI records in $tmp/empty.json" ||
    { echo "FAIL: an empty file was not refused: $out"; exit 1; }
echo "4 passed, 0 failed"
