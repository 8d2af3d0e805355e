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
# ... and the simulator finds the installed latency tables (share/topsync/c2c)
env -u LD_LIBRARY_PATH "$tmp/prefix/bin/topsync-sim" barrier --topology 'pack:2 numa:2 l3:1 core:32 pu:1' \
    --c2c "$tmp/prefix/share/topsync/c2c/hisilicon-kunpeng-920-6426.csv" --np 64 \
    --algorithm topo --episodes 50 | grep -q "topo:numa,socket/global"
# ... the tuner writes a file that the installed library's auto then reads
env -u LD_LIBRARY_PATH "$tmp/prefix/bin/topsync-tune" --threads 2 --iterations 50 --runs 1 \
    --no-c2c --output "$tmp/tuning.json" >/dev/null
TOPSYNC_TUNING="$tmp/tuning.json" env -u LD_LIBRARY_PATH "$tmp/prefix/bin/topsync-info" \
    --explain --np 2 | grep -q "auto: tuning file $tmp/tuning.json"
# (a sanitized library cannot be preloaded into an unsanitized program)
if [ -z "$sanitize" ]; then
    pthread_lib=$(ls "$tmp/prefix"/lib*/libtopsync-pthread.so | head -1)
    out=$(env -u LD_LIBRARY_PATH LD_PRELOAD="$pthread_lib" "$tmp/prefix/libexec/topsync/topsync-bench-pthread-loop" 2 100 1)
    case "$out" in
        *"implementation: topsync:"*) ;;
        *) echo "FAILED: the installed libtopsync-pthread did not bind: $out" >&2; exit 1 ;;
    esac
fi
# bin/ holds the four tools only; their helpers are in libexec/topsync, where
# the installed topsync-bench finds them (the drop-in's pthread program)
bins=$(cd "$tmp/prefix/bin" && ls | tr '\n' ' ')
case "$bins" in "topsync-bench topsync-info topsync-sim topsync-tune ") ;;
    *) echo "FAILED: bin/ holds more than the four tools: $bins" >&2; exit 1 ;; esac
[ -x "$tmp/prefix/libexec/topsync/topsync-bench-pthread-loop" ] ||
    { echo "FAILED: no libexec/topsync/topsync-bench-pthread-loop" >&2; exit 1; }
# every installed helper starts as it is: nothing its loader cannot find
# (RUNPATH from libexec/topsync; it was libexec/lib)
for helper in "$tmp"/prefix/libexec/topsync/*; do
    deps=$(env -u LD_LIBRARY_PATH ldd "$helper")
    if grep -q "not found" <<<"$deps"; then
        echo "FAILED: installed $(basename "$helper") misses libraries: $(grep 'not found' <<<"$deps")" >&2
        exit 1
    fi
done
for page in man7/topsync.7 man1/topsync-info.1 man1/topsync-bench.1 man1/topsync-sim.1 man1/topsync-tune.1; do
    [ -s "$tmp/prefix/share/man/$page" ] || { echo "FAILED: share/man/$page not installed" >&2; exit 1; }
done
# bash completion for the four tools, where bash-completion looks
for tool in topsync-info topsync-bench topsync-sim topsync-tune; do
    [ -s "$tmp/prefix/share/bash-completion/completions/$tool" ] ||
        { echo "FAILED: share/bash-completion/completions/$tool not installed" >&2; exit 1; }
done
# share/doc/topsync: the README, the licence, the changes, the design and
# model notes the messages point to, and the examples as source
for doc in README.md LICENSE CHANGELOG.md docs/design.md docs/model.md docs/results.md \
           docs/developers.md docs/guide/mpi.md docs/guide/configuration.md examples/barrier_threads.c; do
    [ -s "$tmp/prefix/share/doc/topsync/$doc" ] ||
        { echo "FAILED: share/doc/topsync/$doc not installed" >&2; exit 1; }
done
[ -s "$tmp/prefix/share/man/man3/topsync_barrier.3" ] && [ -s "$tmp/prefix/share/man/man3/topsync_barrier_create.3" ] ||
    { echo "FAILED: the section-3 pages (share/man/man3/topsync_barrier.3, ...) not installed" >&2; exit 1; }
MANPATH="$tmp/prefix/share/man" man -w topsync >/dev/null 2>&1 || ! command -v man >/dev/null ||
    { echo "FAILED: man does not find topsync(7) in the installed prefix" >&2; exit 1; }
# coll/topsync, when built: installed where the README says, finding the
# installed libtopsync-mpi-openmpi by its own RPATH
comp=$(ls "$tmp"/prefix/lib*/topsync/openmpi/mca_coll_topsync.so 2>/dev/null || true)
if [ -f "$build/mpi/openmpi-components/mca_coll_topsync.so" ] || [ -n "$comp" ]; then
    [ -n "$comp" ] || { echo "FAILED: coll/topsync built but not installed in lib/topsync/openmpi" >&2; exit 1; }
    # (the whole output first: grep -q leaving early would SIGPIPE ldd under pipefail)
    deps=$(env -u LD_LIBRARY_PATH ldd "$comp")
    grep -qE "libtopsync-mpi-openmpi\.so\.[0-9.]+ => $tmp/prefix/lib" <<<"$deps" ||
        { echo "FAILED: the installed coll/topsync does not find the installed libtopsync-mpi-openmpi: $deps" >&2; exit 1; }
fi
if [ -z "$sanitize" ]; then
    out=$(env -u LD_LIBRARY_PATH "$tmp/prefix/bin/topsync-bench" barrier --threads 2 --algorithm auto \
          --peers program --iterations 50 --runs 1 2>&1)
    grep -q "preload:pthread-program" <<<"$out" ||
        { echo "FAILED: the installed topsync-bench did not run its libexec helper: $out" >&2; exit 1; }
fi
# libtopsync-pthread for consumers: pkg-config topsync-pthread and
# find_package(topsync COMPONENTS pthread), each linked before libc
cat >"$tmp/pthread_consumer.c" <<'CEOF'
#include <pthread.h>
#include <stdio.h>
#include <topsync/pthread.h>
int main(void)
{
    pthread_barrier_t b;
    if (pthread_barrier_init(&b, NULL, 1) != 0 || pthread_barrier_wait(&b) != PTHREAD_BARRIER_SERIAL_THREAD)
        return 1;
    printf("pthread consumer: %s\n", topsync_pthread_barrier_implementation(&b));
    return pthread_barrier_destroy(&b);
}
CEOF
if [ -z "$sanitize" ]; then
    cc -o "$tmp/pc_pthread" "$tmp/pthread_consumer.c" $(pkg-config --cflags --libs topsync-pthread) \
        -Wl,-rpath,"$(dirname "$libdir")"
    out=$(env -u LD_LIBRARY_PATH "$tmp/pc_pthread")
    case "$out" in "pthread consumer: topsync:"*) ;;
        *) echo "FAILED: pkg-config topsync-pthread consumer: $out" >&2; exit 1 ;; esac
    mkdir -p "$tmp/cm_pthread"
    cp "$tmp/pthread_consumer.c" "$tmp/cm_pthread/main.c"
    printf 'cmake_minimum_required(VERSION 3.18)\nproject(c C)\nfind_package(topsync 0.1 REQUIRED COMPONENTS pthread)\nadd_executable(c main.c)\ntarget_link_libraries(c PRIVATE topsync::topsync-pthread)\n' \
        >"$tmp/cm_pthread/CMakeLists.txt"
    cmake -S "$tmp/cm_pthread" -B "$tmp/cm_pthread/b" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
    cmake --build "$tmp/cm_pthread/b" >/dev/null
    out=$(env -u LD_LIBRARY_PATH "$tmp/cm_pthread/b/c")
    case "$out" in "pthread consumer: topsync:"*) ;;
        *) echo "FAILED: find_package COMPONENTS pthread consumer: $out" >&2; exit 1 ;; esac
fi
# components that do not exist, or are not installed, are named in the error
mkdir -p "$tmp/cm_bad"
printf 'cmake_minimum_required(VERSION 3.18)\nproject(c C)\nfind_package(topsync 0.1 REQUIRED COMPONENTS ${COMP})\n' \
    >"$tmp/cm_bad/CMakeLists.txt"
out=$(cmake -S "$tmp/cm_bad" -B "$tmp/cm_bad/b1" -DCOMP=bogus -DCMAKE_PREFIX_PATH="$tmp/prefix" 2>&1) &&
    { echo "FAILED: find_package COMPONENTS bogus succeeded" >&2; exit 1; }
grep -q "topsync has no component 'bogus'; valid: openmpi, mpich, abi, pthread" <<<"$out" ||
    { echo "FAILED: COMPONENTS bogus: no message naming the valid ones: $out" >&2; exit 1; }
if [ -f "$libdir/topsync-mpi-abi.pc" ]; then
    cmake -S "$tmp/cm_bad" -B "$tmp/cm_bad/b2" -DCOMP=abi -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null ||
        { echo "FAILED: find_package COMPONENTS abi with libtopsync-mpi-abi installed" >&2; exit 1; }
    pkg-config --libs topsync-mpi-abi | grep -q -- "-ltopsync-mpi-abi" ||
        { echo "FAILED: topsync-mpi-abi.pc" >&2; exit 1; }
else
    out=$(cmake -S "$tmp/cm_bad" -B "$tmp/cm_bad/b2" -DCOMP=abi -DCMAKE_PREFIX_PATH="$tmp/prefix" 2>&1) &&
        { echo "FAILED: find_package COMPONENTS abi succeeded without the library" >&2; exit 1; }
    grep -q "libtopsync-mpi-abi is not installed" <<<"$out" ||
        { echo "FAILED: COMPONENTS abi: no message saying why: $out" >&2; exit 1; }
fi
# The static library keeps its internals local: a program with a symbol of
# the same name as one of them (ts_fail) links and runs.
cat >"$tmp/collide.c" <<'CEOF'
#include <topsync.h>
int ts_fail(int x) { return x; }
int main(void) { return topsync_environment_check() == 0 && ts_fail(0) == 0 ? 0 : 1; }
CEOF
cc $flags -o "$tmp/collide" "$tmp/collide.c" -I"$tmp/prefix/include" "$(dirname "$libdir")/libtopsync.a" \
    $(pkg-config --libs hwloc) -lpthread
"$tmp/collide"
if nm -g --defined-only "$(dirname "$libdir")/libtopsync.a" | grep -E ' [A-Z] ' | grep -v ' topsync_' | grep -q .; then
    echo "FAILED: libtopsync.a has global non-topsync symbols" >&2
    exit 1
fi
# The MPI libraries: find_package(topsync COMPONENTS IMPL) and pkg-config
# topsync-mpi-IMPL, each built and run under its launcher.
checks=11
for impl in openmpi mpich; do
    [ -f "$libdir/topsync-mpi-$impl.pc" ] || continue
    [ -z "$sanitize" ] || continue # sanitized MPI programs: the mpi label covers them
    if [ "$impl" = openmpi ]; then
        launch="mpirun.openmpi --allow-run-as-root --oversubscribe -np 2"
    else
        launch="mpirun.mpich -n 2"
    fi
    cmake -S "$src/consumer_mpi" -B "$tmp/consumer_mpi_$impl" -DIMPL=$impl \
        -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
    cmake --build "$tmp/consumer_mpi_$impl" >/dev/null
    out=$(env -u LD_LIBRARY_PATH timeout 60 $launch "$tmp/consumer_mpi_$impl/mpi_consumer")
    case "$out" in *"mpi consumer: "*) ;;
        *) echo "FAILED: $impl find_package consumer: $out" >&2; exit 1 ;; esac
    cc -o "$tmp/pc_mpi_$impl" "$src/consumer_mpi/main.c" $(pkg-config --cflags --libs "topsync-mpi-$impl") \
        -Wl,-rpath,"$(dirname "$libdir")"
    out=$(env -u LD_LIBRARY_PATH timeout 60 $launch "$tmp/pc_mpi_$impl")
    case "$out" in *"mpi consumer: "*) ;;
        *) echo "FAILED: $impl pkg-config consumer: $out" >&2; exit 1 ;; esac
    # the installed MPI benchmarks from the private prefix: their helpers in
    # libexec/topsync find the prefix's libraries by their own RUNPATH (they
    # looked in libexec/lib: exit 127)
    out=$(cd "$tmp" && env -u LD_LIBRARY_PATH timeout 120 $launch "$tmp/prefix/bin/topsync-bench" barrier \
          --mpi --iterations 50 --runs 1 2>&1)
    grep -q "peer:mpi" <<<"$out" ||
        { echo "FAILED: installed topsync-bench barrier --mpi under $impl: $out" >&2; exit 1; }
    out=$(cd "$tmp" && env -u LD_LIBRARY_PATH timeout 120 $launch "$tmp/prefix/bin/topsync-bench" allreduce \
          --mpi --iterations 50 --runs 1 2>&1)
    grep -qE "[0-9]+ B +mpi" <<<"$out" ||
        { echo "FAILED: installed topsync-bench allreduce --mpi under $impl: $out" >&2; exit 1; }
    out=$(cd "$tmp" && env -u LD_LIBRARY_PATH timeout 120 $launch "$tmp/prefix/bin/topsync-tune" --mpi \
          --iterations 50 --runs 1 --output "$tmp/tune-$impl.json" 2>&1)
    grep -q "wrote $tmp/tune-$impl.json" <<<"$out" ||
        { echo "FAILED: installed topsync-tune --mpi under $impl: $out" >&2; exit 1; }
    checks=$((checks + 3))
    # C++: the header keeps the MPI's C++ bindings out (MPI::Comm would need
    # libmpi_cxx) when it comes first
    printf '#include <topsync/mpi.h>\n#include <cstdio>\nint main(int argc, char **argv) {\n  MPI_Init(&argc, &argv);\n  MPI_Barrier(MPI_COMM_WORLD);\n  int r; MPI_Comm_rank(MPI_COMM_WORLD, &r);\n  if (!r) std::printf("mpi consumer: %%s\\n", topsync_mpi_describe(MPI_COMM_WORLD));\n  MPI_Finalize();\n}\n' \
        >"$tmp/consumer_$impl.cpp"
    g++ -o "$tmp/pc_mpi_cxx_$impl" "$tmp/consumer_$impl.cpp" \
        $(pkg-config --cflags --libs "topsync-mpi-$impl" topsync) -Wl,-rpath,"$(dirname "$libdir")"
    out=$(env -u LD_LIBRARY_PATH timeout 60 $launch "$tmp/pc_mpi_cxx_$impl")
    case "$out" in *"mpi consumer: "*) ;;
        *) echo "FAILED: $impl C++ pkg-config consumer: $out" >&2; exit 1 ;; esac
    # legacy C++ (MPI::) with the .pc's flags: <mpi.h> first, then ours; the
    # .pc defines nothing that takes the bindings away (issue 37.7)
    if [ "$impl" = openmpi ] && pkg-config --exists ompi-cxx; then
        printf '#include <mpi.h>\n#include <topsync/mpi.h>\n#include <cstdio>\nint main(int argc, char **argv) {\n  MPI::Init(argc, argv);\n  int r = MPI::COMM_WORLD.Get_rank();\n  MPI::COMM_WORLD.Barrier();\n  if (!r) std::printf("mpi consumer: %%s\\n", topsync_mpi_describe(MPI_COMM_WORLD));\n  MPI::Finalize();\n}\n' \
            >"$tmp/legacy_$impl.cpp"
        g++ -o "$tmp/pc_mpi_legacy_$impl" "$tmp/legacy_$impl.cpp" \
            $(pkg-config --cflags --libs "topsync-mpi-$impl" ompi-cxx) -Wl,-rpath,"$(dirname "$libdir")"
        out=$(env -u LD_LIBRARY_PATH timeout 60 $launch "$tmp/pc_mpi_legacy_$impl")
        case "$out" in *"mpi consumer: "*) ;;
            *) echo "FAILED: $impl legacy C++ (MPI::) pkg-config consumer: $out" >&2; exit 1 ;; esac
        checks=$((checks + 1))
    fi
    checks=$((checks + 3))
done
echo "$checks passed, 0 failed"
