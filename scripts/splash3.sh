#!/usr/bin/env bash
# Splash-3 (real pthread programs nobody here wrote) natively and through
# libtopsync-pthread (issue 35 items 4 and 5).
#
#   scripts/splash3.sh BUILD_DIR check            each app at 2 and 8 threads,
#       natively and preloaded, once: their results must be identical
#       (timing lines dropped); exit 0 when all are, 77 when the suite is
#       not here, 1 otherwise. The apps label's test.
#   scripts/splash3.sh BUILD_DIR bench [RUNS]     RUNS (default 5) interleaved
#       native / preloaded runs of each app at 2 and 8 threads, idle and with
#       two busy neighbours (busy loops), unbound as a pthread program runs;
#       the median wall time of each and their ratio, as a Markdown table on
#       standard output.
#
# The suite is ../shared/suites/splash-3-e35efba.tar.xz beside the checkout
# (TOPSYNC_SPLASH3_TARBALL to name another), built once into
# BUILD_DIR/splash3 with pthread_barrier_* as its barrier (the suite's
# POSIX_BARRIER macros; its default macros build a condition-variable
# barrier that never calls pthread_barrier_wait).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:?usage: splash3.sh BUILD_DIR check|bench [RUNS]}" && pwd)
mode=${2:-check}
runs=${3:-5}
case $mode in check | bench) ;; *) echo "splash3.sh: mode '$mode'; valid: check, bench" >&2; exit 2 ;; esac
case $runs in '' | *[!0-9]* | 0) echo "splash3.sh: RUNS '$runs'; valid: a whole number >= 1" >&2; exit 2 ;; esac
lib=$build/pthread/libtopsync-pthread.so
[ -f "$lib" ] || { echo "splash3.sh: $lib not built" >&2; exit 2; }
tarball=${TOPSYNC_SPLASH3_TARBALL:-$root/../shared/suites/splash-3-e35efba.tar.xz}
if [ ! -f "$tarball" ]; then
    echo "splash3.sh: SKIPPED: the Splash-3 source ($tarball) is not here" >&2
    exit 77
fi
for tool in m4 make cc; do
    command -v $tool >/dev/null || { echo "splash3.sh: SKIPPED: $tool is not installed" >&2; exit 77; }
done

# ---- build (once per tarball) ---------------------------------------------
dir=$build/splash3
codes=$dir/Splash-3/codes
stamp=$dir/built-from
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$(sha256sum <"$tarball")" ]; then
    rm -rf "$dir" && mkdir -p "$dir"
    tar -xJf "$tarball" -C "$dir"
    # the suite's POSIX barrier macros, and its empty region-of-interest
    # markers (only its default macro file defines those)
    macros=$dir/pthread-barrier.m4
    sed '/^divert(0)/i define(SPLASH3_ROI_BEGIN, `'"'"')define(SPLASH3_ROI_END, `'"'"')' \
        "$codes/pthread_macros/pthread.m4.POSIX_BARRIER" >"$macros"
    for app in kernels/fft kernels/radix kernels/lu/contiguous_blocks \
               apps/ocean/contiguous_partitions apps/water-nsquared apps/barnes apps/fmm; do
        if ! make -s -C "$codes/$app" MACROS="$macros" >"$dir/build.log" 2>&1; then
            echo "splash3.sh: building $app failed:" >&2
            tail -20 "$dir/build.log" >&2
            exit 1
        fi
    done
    sha256sum <"$tarball" >"$stamp"
fi

# ---- the runs -------------------------------------------------------------
# name, directory, command line (THREADS replaced), standard input (a file
# made with THREADS replaced, or empty)
apps=(
    "FFT|kernels/fft|./FFT -pTHREADS -m20 -t|"
    "RADIX|kernels/radix|./RADIX -pTHREADS -n4194304 -t|"
    "LU|kernels/lu/contiguous_blocks|./LU -pTHREADS -n1024 -t|"
    "OCEAN|apps/ocean/contiguous_partitions|./OCEAN -pTHREADS -n514|"
    "WATER|apps/water-nsquared|./WATER-NSQUARED|water"
    "BARNES|apps/barnes|./BARNES|barnes"
    "FMM|apps/fmm|./FMM|fmm"
)

# The input of an app that reads its parameters (the thread count among
# them) from standard input.
make_input() { # kind threads file
    case $1 in
    water) # 512 molecules, 10 steps; the last line's first field: threads
        printf '  1.5e-16   512  10   6\n -1      3000     3  0\n%s 6.212752\n' "$2" >"$3" ;;
    barnes) # the suite's 16384-body input; its last line: threads
        sed '$d' "$codes/apps/barnes/inputs/n16384-p1" >"$3"
        echo "$2" >>"$3" ;;
    fmm) # the suite's 16384-body input; its line "1": threads
        sed "s/^1\$/$2/" "$codes/apps/fmm/inputs/input.1.16384" >"$3" ;;
    esac
}

# Results only: lines about time and the threads' per-process statistics
# (which thread prints first varies) are dropped. FFT, RADIX and LU check
# their own results (-t); OCEAN and WATER print their physics; BARNES and
# FMM print only their parameters to standard output (their reductions run
# in lock order, so their snapshots differ from run to run even natively):
# for them the check is that both runs end with the same lines.
results() {
    grep -Eiv 'time|fraction|statistics|^ *proc|^ +[0-9]+( +(-?nan|[0-9.e+-]+))+ *$|iter_num|^step [0-9]|start|finish|computeend|elapsed|cycles' "$1" |
        grep -v '^[[:space:]]*$' || true
}

# One run: wall seconds on stdout, the output in $out_file; exit status kept.
run_app() { # preload(0/1) name dir cmd input threads
    local preload=$1 name=$2 app_dir=$3 cmd=${4//THREADS/$6} input_kind=$5 threads=$6
    local in=/dev/null
    if [ -n "$input_kind" ]; then
        in=$dir/input-$input_kind-$threads
        make_input "$input_kind" "$threads" "$in"
    fi
    local t0 t1 rc=0
    t0=$(date +%s.%N)
    (cd "$codes/$app_dir" &&
        if [ "$preload" = 1 ]; then LD_PRELOAD=$lib $cmd <"$in"; else $cmd <"$in"; fi) \
        >"$out_file" 2>&1 || rc=$?
    t1=$(date +%s.%N)
    python3 -c "print(f'{$t1 - $t0:.4f}')"
    return $rc
}

hogs=()
start_hogs() { for _ in 1 2; do (while :; do :; done) & hogs+=($!); done; }
stop_hogs() { [ ${#hogs[@]} -eq 0 ] || kill "${hogs[@]}" 2>/dev/null || true; hogs=(); }
trap stop_hogs EXIT

out_file=$dir/run.out
if [ "$mode" = check ]; then
    passed=0 failed=0
    for threads in 2 8; do
        for spec in "${apps[@]}"; do
            IFS='|' read -r name app_dir cmd input_kind <<<"$spec"
            if ! run_app 0 "$name" "$app_dir" "$cmd" "$input_kind" "$threads" >/dev/null; then
                echo "FAILED: $name $threads threads natively: $(tail -3 "$out_file")"
                failed=$((failed + 1))
                continue
            fi
            native=$(results "$out_file")
            if ! run_app 1 "$name" "$app_dir" "$cmd" "$input_kind" "$threads" >/dev/null; then
                echo "FAILED: $name $threads threads preloaded: $(tail -3 "$out_file")"
                failed=$((failed + 1))
                continue
            fi
            preloaded=$(results "$out_file")
            if [ -z "$native" ]; then
                echo "FAILED: $name $threads threads: no result lines to compare"
                failed=$((failed + 1))
            elif [ "$native" = "$preloaded" ]; then
                echo "ok: $name $threads threads: $(wc -l <<<"$native") result lines identical"
                passed=$((passed + 1))
            else
                echo "FAILED: $name $threads threads: results differ:"
                diff <(echo "$native") <(echo "$preloaded") | head -10 || true
                failed=$((failed + 1))
            fi
        done
    done
    echo "$passed passed, $failed failed"
    [ $failed = 0 ]
    exit
fi

# bench: interleaved runs, medians
median() { python3 -c 'import statistics, sys; print(f"{statistics.median(map(float, sys.argv[1:])):.3f}")' "$@"; }
echo "### Splash-3 natively and through libtopsync-pthread"
echo
echo "Wall seconds, median of $runs interleaved runs; threads unbound (as the programs run them) on"
echo "$(nproc) CPUs; busy: two busy-loop processes beside the program. Results compared"
echo "on every run (timing lines dropped). $(date -u +%Y-%m-%d), $(uname -m)."
echo
echo "| app | threads | neighbours | native s | preloaded s | preloaded / native | results |"
echo "|---|---:|---|---:|---:|---:|---|"
for load in idle busy; do
    [ $load = busy ] && start_hogs
    for threads in 2 8; do
        for spec in "${apps[@]}"; do
            IFS='|' read -r name app_dir cmd input_kind <<<"$spec"
            nat=() pre=() same=identical
            for ((r = 0; r < runs; r++)); do
                nat+=("$(run_app 0 "$name" "$app_dir" "$cmd" "$input_kind" "$threads")") || same="native failed"
                a=$(results "$out_file")
                pre+=("$(run_app 1 "$name" "$app_dir" "$cmd" "$input_kind" "$threads")") || same="preloaded failed"
                [ "$a" = "$(results "$out_file")" ] || same=DIFFER
            done
            n=$(median "${nat[@]}") p=$(median "${pre[@]}")
            echo "| $name | $threads | $load | $n | $p | $(python3 -c "print(f'{$p / $n:.2f}')") | $same |"
        done
    done
    stop_hogs
done
