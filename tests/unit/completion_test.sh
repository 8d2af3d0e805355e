#!/usr/bin/env bash
# The bash completion the build makes from each tool's --help
# (scripts/completion.py): loaded into bash, it completes the tools'
# options, their words and topsync-bench's subcommands.
#   completion_test.sh COMPLETION_DIR
set -u
dir=$1
passed=0 failed=0
# complete TOOL WORD... : what the tool's completion offers for the last word
complete_words() {
    local tool=$1
    shift
    (
        source "$dir/$tool" || exit 1
        COMP_WORDS=("$tool" "$@")
        COMP_CWORD=$#
        COMPREPLY=()
        "$(complete -p "$tool" | sed 's/.*-F \([^ ]*\) .*/\1/')" "$tool" "${*: -1}"
        printf '%s\n' "${COMPREPLY[@]}"
    )
}
check() { # WHAT EXPECTED_LINE TOOL WORD...
    local what=$1 want=$2
    shift 2
    local got
    got=$(complete_words "$@")
    if grep -qx -- "$want" <<<"$got"; then
        passed=$((passed + 1))
    else
        echo "FAIL: $what: '$want' not among: $(tr '\n' ' ' <<<"$got")"
        failed=$((failed + 1))
    fi
}
for tool in topsync-info topsync-sim topsync-tune topsync-bench; do
    [ -s "$dir/$tool" ] || { echo "FAIL: no completion for $tool in $dir"; failed=$((failed + 1)); }
done
check "topsync-info options" --preload topsync-info --pre
check "topsync-info --map-by words" numa topsync-info --map-by nu
check "topsync-info --launcher words" srun topsync-info --preload --launcher sr
check "topsync-bench subcommands" allreduce topsync-bench all
check "topsync-bench subcommands" bcast topsync-bench bc
check "topsync-bench barrier options" --threads topsync-bench barrier --thr
check "topsync-bench bcast options" --sizes topsync-bench bcast --si
check "topsync-sim options" --algorithm topsync-sim barrier --alg
check "topsync-tune options" --output topsync-tune --out
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
