# Sourced by the tests of scripts/: a script refuses bad arguments with a
# message. The test defines run_script (how to run the script under test,
# its arguments given), script_name (how failures name it) and refusal_rc
# (the exit status expected, or "nonzero" for any failure), then calls
#   refused WANT ARGS...
# which passes when the script, run with ARGS, exits so and says WANT.
# Counts in $passed and $fail, started here.
passed=0 fail=0
refused() {
    want=$1
    shift
    out=$(run_script "$@" 2>&1)
    rc=$?
    if [ $rc -ne 0 ] && { [ "$refusal_rc" = nonzero ] || [ $rc -eq "$refusal_rc" ]; } &&
        echo "$out" | grep -qF -- "$want"; then
        passed=$((passed + 1))
    else
        echo "FAIL: $script_name $*: rc $rc: $out"
        fail=1
    fi
}
