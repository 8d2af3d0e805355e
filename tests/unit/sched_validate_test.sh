#!/bin/sh
# scripts/sched_validate.py refuses bad options with a message, and a file
# of kept runs that is not one or was measured with another binding (its
# runs take minutes: scripts/main.sh runs it; docs/model.md section 9).
# Its --mix: the start of each placement and the mixed latency by hand,
# and the whole report from kept runs through a stand-in topsync-sim.
#   sched_validate_test.sh SOURCE_DIR
set -u
src=$1
run_script() { python3 "$src/scripts/sched_validate.py" "$@"; }
script_name=sched_validate.py refusal_rc=nonzero
. "$(dirname "$0")/refused.sh"
refused "usage: sched_validate.py BUILD_DIR"
refused "--np '0' is not valid" build --np 0
refused "--np '2,x' is not valid" build --np 2,x
refused "--bind 'numa' is not valid" build --bind numa
refused "--reps '-1' is not valid" build --reps -1
refused "--seeds '0' is not valid" build --seeds 0
refused "unknown option --bogus" build --bogus 1
refused "--placement '4:3,1' is not valid" build --placement 4:3,1
refused "--placement '4:3,2:0,0,0,0' is not valid" build --placement 4:3,2:0,0,0,0
refused "--placement '4:3,1:0,0,0' is not valid" build --placement 4:3,1:0,0,0
refused "--placement '4:3,1:0,0,0,x' is not valid" build --placement 4:3,1:0,0,0,x
refused "--episodes needs a value" build --episodes
refused "--mix '4:2,2' is not valid" build --mix 4:2,2
refused "--mix '4:2,1@0,0,0,0=1' is not valid" build --mix 4:2,1@0,0,0,0=1
refused "--mix '4:2,2@0,0,0=1' is not valid" build --mix 4:2,2@0,0,0=1
refused "--mix '4:2,2@0,0,0,2=1' is not valid" build --mix 4:2,2@0,0,0,2=1
refused "--mix '4:2,2@0,0,0,0=0' is not valid" build --mix 4:2,2@0,0,0,0=0
refused "--mix '4:2,2@0,0,0,0=1/2,2@0,0,0,0=2' is not valid" build \
    --mix 4:2,2@0,0,0,0=1/2,2@0,0,0,0=2
refused "--mix '4:2,2@0,0,0,0=x' is not valid" build --mix 4:2,2@0,0,0,0=x
refused "P = 4 has both --placement and --mix; give one" build --mix 4:2,2@0,0,0,0=1 \
    --placement 4:2,2:0,0,0,0
refused "--measured /nonexistent/runs.json: no such directory" build --measured /nonexistent/runs.json
tmp=$(mktemp)
echo '{"bind": "core", "np": {}}' > "$tmp"
refused "holds runs bound 'core', not 'none'" build --measured "$tmp"
echo 'not json' > "$tmp"
refused "is not a file of kept runs" build --measured "$tmp"
echo '[1, 2]' > "$tmp"
refused "is not a file of kept runs: no runs per P" build --measured "$tmp"
rm -f "$tmp"
# the measurement against itself: hand-computed cases
if python3 - "$src/scripts" <<'PY'
import math, sys
sys.path.insert(0, sys.argv[1])
from sched_validate import against_itself
rho, spread = against_itself({"a": [1, 2, 1, 2], "b": [4, 8, 4, 8], "c": [10, 10]}, ["a", "b", "c"])
assert abs(rho - 1) < 1e-9 and abs(spread - 2 ** (2 / 3)) < 1e-9, (rho, spread)
rho, spread = against_itself({"a": [1, 3], "b": [3, 1], "c": [2, 2]}, ["a", "b", "c"])
assert abs(rho + 1) < 1e-9 and abs(spread - 3 ** (2 / 3)) < 1e-9, (rho, spread)
assert against_itself({"a": [1], "b": [2]}, ["a", "b"]) is None
PY
then
    passed=$((passed + 1))
else
    echo "FAIL: against_itself"; fail=1
fi
# --mix by hand: the placements, the shares normalised, the harmonic mix
if python3 - "$src/scripts" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
from sched_validate import parse_mix, mixed_latency
p, mix = parse_mix("4:2,2@0,0,0,0=28/3,1@1,1,1,1=34/2,2@0,0,1,1=38")
assert p == 4 and [m[:2] for m in mix] == [("2,2", "0,0,0,0"), ("3,1", "1,1,1,1"),
                                           ("2,2", "0,0,1,1")], mix
assert abs(sum(m[2] for m in mix) - 1) < 1e-12
_, mix = parse_mix("4:2,2@0,0,0,0=1/2,2@0,0,1,1=3")
assert [m[2] for m in mix] == [0.25, 0.75]
# half the time at 4 us an episode, half at 2 us: 3 episodes in 8 us
assert abs(mixed_latency([4000, 2000], [0.5, 0.5]) - 8000 / 3) < 1e-9
assert mixed_latency([5000], [1.0]) == 5000
PY
then
    passed=$((passed + 1))
else
    echo "FAIL: the --mix arithmetic"; fail=1
fi
# the whole --mix report, from kept runs and a stand-in topsync-sim whose
# latency is 1000 ns per thread started on CPU 0 plus 100 ns per busy
# process there (every algorithm alike), so that the mix of 4 on one
# beside 2 busy there (1 part) and 2 + 2 beside 3 there (3 parts) is
# 1 / (0.25 / 4200 + 0.75 / 2300) = 2593 ns against 2000 measured
tmp=$(mktemp -d)
mkdir -p "$tmp/tools"
cat > "$tmp/tools/topsync-sim" <<'SIM'
#!/usr/bin/env python3
import json, sys
args = sys.argv
start = args[args.index("--start-on") + 1].split(",")
noise = args[args.index("--noise-on") + 1].split(",")
names = [args[i + 1] for i, a in enumerate(args) if a == "--algorithm"]
seed = int(args[args.index("--seed") + 1])
latency = 1000.0 * start.count("0") + 100.0 * int(noise[0]) + 10.0 * (seed - 1)
# kept its start's crowd (the most threads on one CPU) for 3/4 of the run
crowd = {str(max(start.count(c) for c in set(start))): 0.75, "1": 0.25}
print(json.dumps([{"algorithm": n, "latency_ns": latency, "crowd_share": crowd} for n in names]))
SIM
chmod +x "$tmp/tools/topsync-sim"
python3 - "$tmp/kept.json" <<'PY'
import json, sys
names = ["sense-reversing", "dissemination", "peer:glibc"]
json.dump({"bind": "none", "np": {"4": {n: [1000, 2000, 3000] for n in names}}},
          open(sys.argv[1], "w"))
PY
out=$(python3 "$src/scripts/sched_validate.py" "$tmp" --np 4 --measured "$tmp/kept.json" \
    --mix 4:2,2@0,0,0,0=1/3,1@0,0,1,1=3 2>&1)
if echo "$out" | grep -qF "25% of the time as 2,2@0,0,0,0; 75% of the time as 3,1@0,0,1,1" &&
    echo "$out" | grep -qF "| dissemination | 2000 (1000-3000) | 4200 | 2300 | 2593 | 1.30 |" &&
    echo "$out" | grep -qF "2,2@0,0,0,0 75%, 3,1@0,0,1,1 75% of the run" &&
    echo "$out" | grep -qF "Measured: 3 commands." &&
    echo "$out" | grep -qF "Spearman (predicted, measured) over 3:" &&
    echo "$out" | grep -qF "within 2x: 3;"; then
    passed=$((passed + 1))
else
    echo "FAIL: the --mix report: $out"; fail=1
fi
# seeds 1-3 (+0, +10, +20 ns): the median of each placement is 10 ns
# more, 4210 and 2310, and the mix 1 / (0.25 / 4210 + 0.75 / 2310) = 2604
out=$(python3 "$src/scripts/sched_validate.py" "$tmp" --np 4 --measured "$tmp/kept.json" \
    --mix 4:2,2@0,0,0,0=1/3,1@0,0,1,1=3 --seeds 3 2>&1)
if echo "$out" | grep -qF "| dissemination | 2000 (1000-3000) | 4210 | 2310 | 2604 | 1.30 |" &&
    echo "$out" | grep -qF "the median of seeds 1-3"; then
    passed=$((passed + 1))
else
    echo "FAIL: the --mix report over seeds: $out"; fail=1
fi
rm -rf "$tmp"
echo "$passed passed, $fail failed"
exit $fail
