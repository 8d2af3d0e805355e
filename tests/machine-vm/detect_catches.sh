#!/usr/bin/env bash
# machine-vm.detect-catches: the tier's topology comparison (machine_test.py)
# must reject a topsync whose detected levels are wrong. A scratch copy of
# the source gets the level order broken (src/topology/levels.c orders the
# levels coarsest first instead of finest first: NUMA no longer nests under
# Package and is dropped), topsync-info is built from it, and its JSON
# for machine A's topology is compared with the expectation the tier uses:
# every mapping must differ. The unmodified build must match.
# usage: detect_catches.sh SOURCE_DIR BUILD_DIR
set -uo pipefail
src=$1 build=$2
here=$(cd "$(dirname "$0")" && pwd)
scratch=$(mktemp -d "${TMPDIR:-/tmp}/topsync-detect-catches.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
tar -C "$src" --exclude='./build*' --exclude=./.git --exclude=./out -cf - . | tar -C "$scratch" -xf -
levels=$scratch/src/topology/levels.c
sed -i 's/nblocks\[order\[at - 1\]\] < nblocks\[k\]/nblocks[order[at - 1]] > nblocks[k]/' "$levels"
if cmp -s "$levels" "$src/src/topology/levels.c"; then
    echo "FAIL: the mutation did not apply to src/topology/levels.c (has the file changed?)"
    exit 1
fi
if ! { cmake -S "$scratch" -B "$scratch/b" -G Ninja -DCMAKE_BUILD_TYPE=Release \
           -DTOPSYNC_BUILD_MPI=OFF -DTOPSYNC_BUILD_PTHREAD=OFF -DTOPSYNC_BUILD_TESTS=OFF >"$scratch/build.log" 2>&1 &&
       ninja -C "$scratch/b" topsync-info >>"$scratch/build.log" 2>&1; }; then
    tail -n 20 "$scratch/build.log"
    echo "FAIL: the scratch build with the level order broken did not build"
    exit 1
fi
HERE=$here python3 - "$build" "$scratch/b/tools/topsync-info" <<'PY'
import json, os, subprocess, sys
sys.path.insert(0, os.environ["HERE"])
import machine_test
import machine_vm
build, mutant = sys.argv[1], sys.argv[2]
m = machine_vm.MACHINES["A"]
np = m.sockets * m.cores
failed = 0
for map_by in ("core", "numa", "socket"):
    want = machine_test.expected(m, build, map_by, np)
    args = ["--topology", machine_test.synthetic(m), "--np", str(np), "--map-by", map_by, "--json"]
    good = json.loads(subprocess.run([os.path.join(build, "tools", "topsync-info")] + args,
                                     capture_output=True, text=True, check=True).stdout)
    bad = json.loads(subprocess.run([mutant] + args, capture_output=True, text=True,
                                    check=True).stdout)
    if machine_test.compare(want, good):
        print("FAIL: map-by %s: the real build differs from the expectation" % map_by)
        failed += 1
    diffs = machine_test.compare(want, bad)
    if diffs:
        print("PASS: map-by %s: the broken level order is caught: %s" % (map_by, diffs[0][:150]))
    else:
        print("FAIL: map-by %s: a build with the level order broken passed the comparison" % map_by)
        failed += 1
sys.exit(1 if failed else 0)
PY
