#!/usr/bin/env bash
# unit.format: every C file of the project (examples/ aside: the README quotes
# them byte for byte) is as clang-format 14 and .clang-format leave it.
# With --catches: a scratch copy of one file, mis-indented, must be flagged.
# Exit 77 (CTest: skipped, with this message) when clang-format-14 is missing.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cf=$(command -v clang-format-14 || true)
if [ -z "$cf" ]; then
    echo "SKIP: clang-format-14 is not installed (scripts/setup-debian.sh installs it)"
    exit 77
fi
check() { # files... : prints those that differ, returns 1 if any
    local bad=0 f
    for f in "$@"; do
        if ! "$cf" --style=file:"$root/.clang-format" --dry-run --Werror "$f" >/dev/null 2>&1; then
            echo "not formatted: ${f#$root/}"
            bad=1
        fi
    done
    return $bad
}
if [ "${1:-}" = --catches ]; then
    scratch=$(mktemp -d)
    trap 'rm -rf "$scratch"' EXIT
    sed 's/^    /  /' "$root/src/base/registry.c" > "$scratch/registry.c"
    if check "$scratch/registry.c" >/dev/null; then
        echo "FAIL: a mis-indented copy of src/base/registry.c passed the format check"
        exit 1
    fi
    echo "PASS: the format check flags a mis-indented file"
    exit 0
fi
cd "$root"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    mapfile -t files < <(git ls-files '*.c' '*.h' | grep -v '^examples/')
else
    mapfile -t files < <(find src include mpi pthread tools bench tests -name '*.[ch]' | sort)
fi
if check "${files[@]/#/$root/}"; then
    echo "PASS: ${#files[@]} files formatted as .clang-format says"
else
    echo "FAIL: reformat with: clang-format-14 -i FILE (the style is .clang-format)"
    exit 1
fi
