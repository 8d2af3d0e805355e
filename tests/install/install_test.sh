#!/usr/bin/env bash
# Install topsync from a build tree into a temporary prefix, then build and
# run a consumer with find_package(topsync) (shared and static) and with
# pkg-config.
set -euo pipefail
build=$1
# The sanitizers the library was built with (empty, or e.g. address,undefined):
# a consumer of an instrumented static library must be instrumented too.
sanitize=${2:-}
flags=""
[ -n "$sanitize" ] && flags="-fsanitize=$sanitize"
export CFLAGS="$flags" LDFLAGS="$flags"
src=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
cmake -S "$src/consumer" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/consumer" >/dev/null
LD_LIBRARY_PATH="$tmp/prefix/lib:$tmp/prefix/lib64:${LD_LIBRARY_PATH:-}" "$tmp/consumer/consumer"
"$tmp/consumer/consumer_static"
libdir=$(ls -d "$tmp/prefix"/lib*/pkgconfig | head -1)
export PKG_CONFIG_PATH=$libdir
cc $flags -o "$tmp/pc_consumer" "$src/consumer/main.c" $(pkg-config --cflags --libs topsync) -lpthread
LD_LIBRARY_PATH="$(dirname "$libdir")" "$tmp/pc_consumer"
# Only the public API is exported from the shared library.
if nm -D --defined-only "$(dirname "$libdir")/libtopsync.so" | awk '{print $3}' | grep -v '^topsync_' | grep -qv '^TOPSYNC_0$'; then
    echo "FAILED: libtopsync.so exports non-topsync symbols" >&2
    nm -D --defined-only "$(dirname "$libdir")/libtopsync.so" | grep -v topsync_ >&2
    exit 1
fi
# Installed tools start from the prefix as they are (RUNPATH), and the
# installed drop-in binds an ordinary pthread program.
env -u LD_LIBRARY_PATH "$tmp/prefix/bin/topsync-info" --np 2 >/dev/null
# (a sanitized library cannot be preloaded into an unsanitized program)
if [ -z "$sanitize" ]; then
    pthread_lib=$(ls "$tmp/prefix"/lib*/libtopsync-pthread.so.0 | head -1)
    out=$(env -u LD_LIBRARY_PATH LD_PRELOAD="$pthread_lib" "$tmp/prefix/bin/topsync-bench-pthread-loop" 2 100 1)
    case "$out" in
        *"implementation: topsync:"*) ;;
        *) echo "FAILED: the installed libtopsync-pthread did not bind: $out" >&2; exit 1 ;;
    esac
fi
echo "5 passed, 0 failed"
