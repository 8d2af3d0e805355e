#!/usr/bin/env bash
# auto on the barrier paper's own server (issue 36): without a tuning file,
# for the paper's 128 processes under each mapping of its Fig. 6 and the 64
# of its Fig. 4, auto must choose what the paper measured fastest there, or
# within 5 % of it: topo (Fig. 6: topo-NUMA under every mapping), and for
# Fig. 4, which has no topo, topo or combining-tree (its published fastest).
# The model may overrule the rules only by a margin beyond its measured
# error (src/select/model_error.h); --explain must say which step decided.
#   auto_paper_test.sh TOPSYNC_INFO
set -u
info=$1
kunpeng="pack:2 numa:2 l3:1 core:32 pu:1"
passed=0 failed=0
# each case: np, mapping, what the paper measured fastest (or within 5 %),
# and what the explanation must say decided
for case in "128 core topo model's.error" "128 numa topo model's.error" \
            "128 socket topo model's.error" "64 core topo|combining-tree model's.error"; do
    set -- $case
    np=$1 map=$2 allowed=$3 reason=$4
    out=$(TOPSYNC_TUNING=off "$info" --topology "$kunpeng" --np "$np" --map-by "$map" --explain \
          --processes 2>&1)
    chosen=$(sed -n 's/^auto for these [0-9]* [a-z]*: \([^,]*\),.*/\1/p' <<<"$out")
    why=$(grep "^  auto: " <<<"$out")
    if [[ "${chosen%%:*}" =~ ^($allowed)$ ]] && grep -q "$reason" <<<"$why"; then
        passed=$((passed + 1))
        echo "ok: np $np map-by $map: $chosen; $why"
    else
        failed=$((failed + 1))
        echo "FAILED: np $np map-by $map: auto chose '$chosen' (the paper measured $allowed" \
             "fastest), explained by '$reason'?: $out" >&2
    fi
done
echo "$passed passed, $failed failed"
[ $failed = 0 ]
