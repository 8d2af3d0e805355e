#!/bin/sh
# Run one GenMC harness: run_genmc.sh GENMC EXPECT HARNESS [CFLAGS...]
# EXPECT: pass   GenMC must explore every execution and find nothing;
#         catch  GenMC must report an error (the weakened variant: a harness
#                proves something only if its weakening is caught).
# Always with --rc11 --check-liveness. Prints GenMC's summary (and its whole
# report when the expectation fails).
set -u
genmc=$1 expect=$2 harness=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
[ -x "$genmc" ] || { echo "FAIL: no GenMC at $genmc (scripts/genmc-build.sh builds it)"; exit 1; }
# GenMC 0.9 compiles its input to the fixed path /tmp/__genmc.ll, so two
# runs at once (ctest -j) read each other's code. Compile here instead, as
# GenMC would (its clang and flags, its include/), into a file of our own.
genmc_dir=$(cd "$(dirname "$genmc")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/topsync-genmc.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
if ! clang-14 -fno-discard-value-names -Xclang -disable-O0-optnone -g \
        -I"$here/../../src" -I"$here/../../include" "$@" -I"$genmc_dir/include" \
        -D__CONFIG_GENMC_INODE_DATA_SIZE=64 -S -emit-llvm -o "$tmp/harness.ll" \
        "$here/$harness" 2>"$tmp/clang.log"; then
    cat "$tmp/clang.log"
    echo "FAIL: $harness does not compile"
    exit 1
fi
out=$("$genmc" --rc11 --check-liveness --input-from-bitcode-file -- "$tmp/harness.ll" 2>&1)
summary=$(printf '%s\n' "$out" | grep -E "^(No errors|Error detected|Non-terminating|Number of complete|Total wall)")
case $expect in
pass)
    if printf '%s\n' "$out" | grep -q "^No errors were detected"; then
        printf '%s\n' "$summary"; exit 0
    fi ;;
catch)
    if printf '%s\n' "$out" | grep -q "^Error detected"; then
        printf 'caught, as it must be:\n%s\n' "$summary"; exit 0
    fi ;;
*) echo "run_genmc.sh: EXPECT is pass or catch, not '$expect'"; exit 2 ;;
esac
printf '%s\n' "$out" | tail -n 80
echo "FAIL: expected $expect"
exit 1
