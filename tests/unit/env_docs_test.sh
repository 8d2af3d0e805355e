#!/bin/sh
# The TOPSYNC_* variables users set, as src/base/env.c lists them (its
# library, MPI library and benchmarks groups), must each be in
# `topsync-info --env`, in topsync(7) and in the user guide: a variable
# added to one and not the others fails here.
#   env_docs_test.sh TOPSYNC_INFO SOURCE_DIR
set -u
info=$1 src=$2
names=$(sed -n '/\/\* library \*\//,/\/\* scripts and tests \*\//p' "$src/src/base/env.c" |
        grep -o '"TOPSYNC_[A-Z0-9_]*"' | tr -d '"')
[ -n "$names" ] || { echo "FAIL: no variables found in src/base/env.c"; exit 1; }
listed=$("$info" --env)
failed=0 passed=0
for name in $names; do
    for where in env man guide; do
        case $where in
        env) grep -q "^$name " <<EOT
$listed
EOT
             ;;
        man) grep -q "$name" "$src/docs/man/topsync.7.in" ;;
        guide) cat "$src"/docs/guide/*.md | grep -q "$name" ;;
        esac
        if [ $? = 0 ]; then
            passed=$((passed + 1))
        else
            echo "FAIL: $name is not in $where (topsync-info --env, docs/man/topsync.7.in, docs/guide)"
            failed=$((failed + 1))
        fi
    done
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
