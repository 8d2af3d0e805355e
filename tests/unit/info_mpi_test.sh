#!/usr/bin/env bash
# topsync-info --mpi PROGRAM follows dependencies as the dynamic loader
# does (issue 37.18): an MPI reached through a library (as the ScaLAPACK
# tester reaches MPICH through libscalapack-mpich) is found, through
# RUNPATH with $ORIGIN, RPATH and LD_LIBRARY_PATH; a library the loader
# would not find is named. The libraries are stand-ins built here with the
# MPIs' sonames: topsync-info reads ELF files and loads nothing.
set -u
info=$1
passed=0
failed=0
ok() { passed=$((passed + 1)); }
ko() { failed=$((failed + 1)); echo "FAILED: $*" >&2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/mpi" "$tmp/lib" "$tmp/bin"
cc=${CC:-cc}

echo 'int MPI_Barrier(void *comm) { return comm != 0; }' >"$tmp/mpi.c"
echo 'int MPI_Barrier(void *); int middle(void) { return MPI_Barrier(0); }' >"$tmp/middle.c"
echo 'int middle(void); int main(void) { return middle(); }' >"$tmp/main.c"
$cc -shared -fPIC -Wl,-soname,libmpich.so.12 -o "$tmp/mpi/libmpich.so.12" "$tmp/mpi.c" &&
$cc -shared -fPIC -Wl,-soname,libmpi.so.99 -o "$tmp/mpi/libmpi.so.99" "$tmp/mpi.c" || exit 1
# libmiddle finds the MPI through its RUNPATH, relative to itself
cp "$tmp/mpi/libmpich.so.12" "$tmp/lib/"
$cc -shared -fPIC -Wl,-soname,libmiddle.so -Wl,--enable-new-dtags,-rpath,'$ORIGIN' \
    -o "$tmp/lib/libmiddle.so" "$tmp/middle.c" "$tmp/lib/libmpich.so.12" || exit 1
# the program needs only libmiddle, found through its own RPATH
$cc -Wl,--no-as-needed -Wl,--disable-new-dtags,-rpath,"$tmp/lib" -o "$tmp/bin/through" \
    "$tmp/main.c" "$tmp/lib/libmiddle.so" || exit 1
out=$("$info" --mpi "$tmp/bin/through" 2>&1)
rc=$?
[ $rc -eq 0 ] && grep -q "^use: libtopsync-mpi-mpich.so$" <<<"$out" &&
    grep -q "through libmiddle.so, which needs libmpich.so.12" <<<"$out" &&
    ok || ko "MPI through a library: rc $rc: $out"

# no path to libmiddle recorded: not found, named; found with LD_LIBRARY_PATH
$cc -Wl,--no-as-needed -o "$tmp/bin/nopath" "$tmp/main.c" "$tmp/lib/libmiddle.so" || exit 1
out=$(env -u LD_LIBRARY_PATH "$info" --mpi "$tmp/bin/nopath" 2>&1)
rc=$?
[ $rc -eq 1 ] && grep -q "1 not found as the loader searches, libmiddle.so first" <<<"$out" &&
    ok || ko "a library the loader would not find: rc $rc: $out"
out=$(LD_LIBRARY_PATH="$tmp/lib" "$info" --mpi "$tmp/bin/nopath" 2>&1)
rc=$?
[ $rc -eq 0 ] && grep -q "^use: libtopsync-mpi-mpich.so$" <<<"$out" &&
    ok || ko "the same with LD_LIBRARY_PATH: rc $rc: $out"

# an MPI topsync does not know, two levels down: named with its chain
mkdir -p "$tmp/other"
cp "$tmp/mpi/libmpi.so.99" "$tmp/other/"
$cc -shared -fPIC -Wl,-soname,libmiddle.so -Wl,--enable-new-dtags,-rpath,'$ORIGIN' \
    -o "$tmp/other/libmiddle.so" "$tmp/middle.c" "$tmp/other/libmpi.so.99" || exit 1
$cc -Wl,--no-as-needed -Wl,-rpath,"$tmp/other" -o "$tmp/bin/unknown" "$tmp/main.c" \
    "$tmp/other/libmiddle.so" || exit 1
out=$("$info" --mpi "$tmp/bin/unknown" 2>&1)
rc=$?
[ $rc -eq 1 ] && grep -q "an MPI library topsync does not know (libmpi.so.99, through libmiddle.so" <<<"$out" &&
    ok || ko "an unknown MPI through a library: rc $rc: $out"

# a program with no MPI anywhere: rc 1, the count of what was read
out=$("$info" --mpi /bin/sh 2>&1)
rc=$?
[ $rc -eq 1 ] && grep -q "MPI: none among its [0-9]* dependencies, direct and indirect" <<<"$out" &&
    ok || ko "/bin/sh: rc $rc: $out"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
