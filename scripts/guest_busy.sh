#!/usr/bin/env bash
# Issue 53's busy 16-core case in the emulated machine (docs/results.md,
# "In the emulated 32-vCPU guest"): machine-vm's machine A (qemu, 32 vCPUs,
# 4 NUMA nodes) runs 16 unbound threads on its CPUs 0-15 beside 16 busy
# processes on the same CPUs: auto with TOPSYNC_REACTIVE=on, auto with off,
# and the robust configuration alone (sense-reversing, block), each against
# glibc's pthread_barrier in the same command, alternating, ROUNDS rounds.
# Under TCG a barrier takes milliseconds: only ratios inside the guest mean
# anything.
#
#   usage: scripts/guest_busy.sh BUILD_DIR OUT [ROUNDS] [ITERATIONS]
#   (defaults 2 rounds of 1500 barriers per run, 3 runs; about 6 minutes)
# Prints one line per command: what ran, ns per barrier, ratio to glibc,
# switches; the commands' whole output is in OUT.
set -euo pipefail
if [ "${1:-}" = --in-guest ]; then
    bench=$2 out=$3 rounds=$4 iters=$5
    run() { # name reactive algorithm [options]
        local name=$1 mode=$2 alg=$3
        shift 3
        TOPSYNC_REACTIVE=$mode TOPSYNC_VERBOSE=1 taskset -c 0-15 "$bench" barrier --threads 16 \
            --bind none --noise 16 --algorithm "$alg" "$@" --peers pthread \
            --iterations "$iters" --runs 3 >"$out/r$r-$name.txt" 2>&1
    }
    for r in $(seq 1 "$rounds"); do
        run on on auto
        run off off auto
        run robust off sense-reversing --wait block
    done
    exit 0
fi
build=$(cd "${1:?usage: scripts/guest_busy.sh BUILD_DIR OUT [ROUNDS] [ITERATIONS]}" && pwd)
out=$(mkdir -p "${2:?OUT}" && cd "$2" && pwd)
rounds=${3:-2} iters=${4:-1500}
here=$(cd "$(dirname "$0")/.." && pwd)
"$here/tests/machine-vm/machine_vm.py" A "$out" -- "$here/scripts/guest_busy.sh" --in-guest \
    "$build/bench/topsync-bench" "$out" "$rounds" "$iters"
for f in "$out"/r*-*.txt; do
    name=$(basename "$f" .txt)
    awk -v name="$name" -v sw="$(grep -c ' -> ' "$f" || true)" \
        '/^  (auto|sense-reversing) / {printf "%s: %s %s ns, %s glibc, %s switches\n", name, $2, $4, $5, sw}' "$f"
done
