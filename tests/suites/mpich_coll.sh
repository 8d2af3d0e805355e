#!/usr/bin/env bash
# MPICH 4.0.2's own collective tests (test/mpi/coll: allred*, red*, reduce*,
# bcast*, op*, as its testlist runs them), built against Debian's Open MPI
# and MPICH and run natively and with libtopsync-mpi preloaded: every test
# that passes natively must pass preloaded (issue 34). Their source is
# Debian's source package of mpich (apt-get source; scripts/setup-debian.sh
# fetches it into $TOPSYNC_SUITES, default /var/cache/topsync-suites).
#   mpich_coll.sh IMPL LIB_DIR    (IMPL: openmpi | mpich)
# MAX_NP caps the testlist's process counts (MPICH's own collectives
# busy-poll: at np 10 on 2 CPUs its native runs alone take minutes).
# Prints per test "native preloaded", then "N passed, N failed"; exits 77
# (skipped) naming what is missing when the source is not there.
set -u
impl=$1 libdir=$2
suites=${TOPSYNC_SUITES:-/var/cache/topsync-suites}
src=$suites/mpich-4.0.2/test/mpi
lib=$libdir/libtopsync-mpi-$impl.so
if [ ! -f "$src/coll/testlist.in" ]; then
    echo "SKIPPED: no MPICH 4.0.2 test suite in $src (scripts/setup-debian.sh fetches it:" \
         "apt-get source mpich, with a deb-src entry)"
    exit 77
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_rmaps_base_oversubscribe=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# the few configure results mtest and dtpools ask for (the rest: this
# machine's libc); dtpools copied, since it includes "../dtpoolsconf.h",
# and with MPI-1's hvector/hindexed spelled as MPI-3 has them (Open MPI 4
# removed the old names)
cat >"$tmp/mpitestconf.h" <<'CONF'
#define HAVE_STDINT_H 1
#define HAVE_INTTYPES_H 1
#define HAVE_STDARG_H 1
#define HAVE_STRING_H 1
#define HAVE_UNISTD_H 1
#define HAVE_LONG_DOUBLE 1
#define HAVE_LONG_LONG_INT 1
#define THREAD_PACKAGE_NAME THREAD_PACKAGE_POSIX
CONF
cp -r "$src/dtpools" "$tmp/dtpools" && touch "$tmp/dtpools/dtpoolsconf.h"
sed -i 's/MPI_Type_hvector(/MPI_Type_create_hvector(/; s/MPI_Type_hindexed(/MPI_Type_create_hindexed(/' \
    "$tmp/dtpools/src/dtpools_custom.c"
flags=(-O1 -I"$tmp" -I"$src/include" -I"$tmp/dtpools/include")
[ "$impl" = openmpi ] && flags+=(-DUSE_STRICT_MPI=1)
support=()
for f in "$src"/util/{mtest,dtypes,mtest_common,mtest_thread}.c "$tmp"/dtpools/src/*.c; do
    o=$tmp/$(basename "$f" .c).o
    mpicc.$impl "${flags[@]}" -c -o "$o" "$f" 2>>"$tmp/cc.log" || {
        echo "FAILED: MPICH's test support ($f) does not build: $(tail -5 "$tmp/cc.log")"
        echo "0 passed, 1 failed"
        exit 1
    }
    support+=("$o")
done
passed=0 failed=0 native_failures=0 built=0
while read -r name np args; do
    case $name in allred* | red* | reduce* | bcast* | op*) ;; *) continue ;; esac
    [ -f "$src/coll/$name.c" ] || continue
    [ -n "${MAX_NP:-}" ] && [ "$np" -gt "$MAX_NP" ] && np=$MAX_NP
    if [ ! -x "$tmp/$name" ]; then
        mpicc.$impl "${flags[@]}" -o "$tmp/$name" "$src/coll/$name.c" "${support[@]}" \
            -lm -lpthread 2>"$tmp/$name.log" || {
            echo "$name: does not build against $impl (not counted): $(grep -m1 error "$tmp/$name.log")"
            continue
        }
        built=$((built + 1))
    fi
    arg=()
    for a in $args; do case $a in arg=*) arg+=("${a#arg=}") ;; esac; done
    results=()
    for how in native preloaded; do
        envs=()
        [ $how = preloaded ] && envs=(LD_PRELOAD="$lib")
        if [ "$impl" = openmpi ]; then
            cmd=(mpirun.openmpi --oversubscribe --bind-to none -np "$np")
            for e in "${envs[@]}"; do cmd+=(-x "$e"); done
        else
            cmd=(mpiexec.mpich -n "$np" -bind-to none)
            for e in "${envs[@]}"; do cmd+=(-genv "${e%%=*}" "${e#*=}"); done
        fi
        out=$(timeout 120 "${cmd[@]}" "$tmp/$name" "${arg[@]}" 2>&1 </dev/null)
        if grep -q "^ No Errors" <<<"$out"; then results+=(pass); else results+=(FAIL); fi
    done
    echo "$name np $np ${arg[*]}: native ${results[0]}, preloaded ${results[1]}"
    if [ "${results[0]}" = FAIL ]; then
        native_failures=$((native_failures + 1)) # the MPI's own: not topsync's to pass
    elif [ "${results[1]}" = pass ]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "FAILED: $name np $np passes natively, fails preloaded: $(tail -5 <<<"$out")"
    fi
done <"$src/coll/testlist.in"
echo "$impl: $built tests built; $passed pass natively and preloaded, $failed fail only" \
     "preloaded, $native_failures fail natively"
[ $passed -gt 0 ] || { echo "FAILED: no test ran"; failed=$((failed + 1)); }
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
