#!/bin/sh
# Model-check the protocols of tests/model/*.pml with spin: each must verify
# with no error, and its -DWEAK variant (a deliberately weakened ordering)
# must be caught. Usage: run_models.sh SRC_DIR WORK_DIR
set -u
src=$1 work=$2
command -v spin >/dev/null || { echo "FAIL: spin missing (apt-get install spin)"; exit 1; }
mkdir -p "$work"
failed=0 passed=0
check() { # MODEL VARIANT(strict|weak)
    model=$1 variant=$2
    dir=$work/$model-$variant
    rm -rf "$dir" && mkdir -p "$dir" && cd "$dir" || exit 1
    flag=""
    [ "$variant" = weak ] && flag=-DWEAK
    spin $flag -a "$src/$model.pml" > spin.log 2>&1 || { echo "FAIL: spin -a $model $variant"; cat spin.log; failed=$((failed + 1)); return; }
    cc -O2 -w -o pan pan.c -DSAFETY -DNOFAIR 2> cc.log || { echo "FAIL: cc pan.c ($model)"; failed=$((failed + 1)); return; }
    ./pan -m200000 > pan.log 2>&1
    errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' pan.log | head -n 1)
    states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' pan.log | head -n 1)
    if [ -z "$errors" ]; then
        echo "FAIL: $model ($variant): no verdict"; tail -5 pan.log; failed=$((failed + 1))
    elif [ "$variant" = strict ] && [ "$errors" = 0 ] && ! grep -q 'max search depth too small' pan.log; then
        echo "ok   $model: verified, $states states"; passed=$((passed + 1))
    elif [ "$variant" = weak ] && [ "$errors" != 0 ]; then
        what=$(grep -m1 -E 'assertion violated|invalid end state' pan.log)
        echo "ok   $model -DWEAK: caught ($what)"; passed=$((passed + 1))
    else
        echo "FAIL: $model ($variant): errors=$errors"; tail -8 pan.log; failed=$((failed + 1))
    fi
}
for m in wait_futex sense_reversing dissemination topo rcl_exclusion rcl_sleep; do
    check $m strict
    check $m weak
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
