#!/usr/bin/env bash
# The whole test suite on a fresh Debian machine: set up, build, run every
# test (labels unit and stress), then the same tests under AddressSanitizer +
# UndefinedBehaviorSanitizer and the thread stress tests under
# ThreadSanitizer. Set TOPSYNC_SANITIZERS=0 to skip the sanitizer builds.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-debian.sh
scripts/build.sh >/dev/null
(cd build && ctest -j2 --output-on-failure -LE long) # the soak: ctest -L long
if [ "${TOPSYNC_SANITIZERS:-1}" != 0 ]; then
    echo "== AddressSanitizer + UndefinedBehaviorSanitizer: unit and stress tests =="
    BUILD_DIR=build-asan BUILD_TYPE=Debug scripts/build.sh -DTOPSYNC_SANITIZE=address,undefined >/dev/null
    (cd build-asan && ctest -j2 --output-on-failure -L "unit|stress" -LE long)
    echo "== ThreadSanitizer: thread stress tests =="
    BUILD_DIR=build-tsan BUILD_TYPE=Debug scripts/build.sh -DTOPSYNC_SANITIZE=thread >/dev/null
    (cd build-tsan && ctest -j2 --output-on-failure -L tsan)
fi
