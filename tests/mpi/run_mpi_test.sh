#!/usr/bin/env bash
# One MPI test case under one MPI implementation.
#   run_mpi_test.sh IMPL CASE BIN_DIR LIB_DIR SRC_DIR
# IMPL: openmpi | mpich. Every case also checks that /dev/shm holds no more
# topsync segments afterwards than before. Prints "N passed, N failed".
set -u
impl=$1 case=$2 bindir=$3 libdir=$4 srcdir=$5
lib=$libdir/libtopsync-mpi-$impl.so
passed=0 failed=0
ok() { passed=$((passed + 1)); }
ko() { failed=$((failed + 1)); echo "FAILED: $*" >&2; }

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_rmaps_base_oversubscribe=1

# launch NP [BIND] [VAR=VALUE ...] -- PROGRAM ARGS...
launch() {
    local np=$1 bind=$2
    shift 2
    local envs=()
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    if [ "$impl" = openmpi ]; then
        local args=(mpirun.openmpi --oversubscribe -np "$np")
        case $bind in
            core) args+=(--bind-to core) ;;
            overload) args+=(--bind-to core:overload-allowed) ;;
            none) args+=(--bind-to none) ;;
        esac
        for e in "${envs[@]}"; do args+=(-x "$e"); done
        args+=(${launcher_flags_openmpi:-})
    else
        local args=(mpiexec.mpich ${launcher_flags_mpich:-} -n "$np")
        case $bind in
            core | overload) args+=(-bind-to core) ;;
            none) args+=(-bind-to none) ;;
        esac
        for e in "${envs[@]}"; do args+=(-genv "${e%%=*}" "${e#*=}"); done
    fi
    timeout "${run_timeout:-300}" "${args[@]}" "$@"
}

ms() { echo $(($(date +%s%N) / 1000000)); }
shm_list() { ls /dev/shm 2>/dev/null | grep -i topsync | sort; }
before=$(shm_list)

# expect_pass OUTPUT: the program's own "N passed, 0 failed" line
expect_pass() {
    local out=$1 what=$2
    if grep -qE '^[1-9][0-9]* passed, 0 failed$' <<<"$out"; then ok; else ko "$what: $(tail -5 <<<"$out")"; fi
}

fortran() { # build a Fortran test, linked or plain, into $tmp
    local src=$1 out=$2 link=$3
    if [ "$link" = linked ]; then
        mpif90.$impl -o "$out" "$srcdir/$src" -L"$libdir" -ltopsync-mpi-$impl -Wl,-rpath,"$libdir"
    else
        mpif90.$impl -o "$out" "$srcdir/$src"
    fi
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
check=$bindir/barrier_check_$impl
plain=$bindir/barrier_check_plain_$impl

case $case in
bound2) # 2 ranks bound to cores: every algorithm, every episode checked
    out=$(launch 2 core -- "$check" 3000 100 2>&1); expect_pass "$out" "np 2 bound" ;;
oversubscribed)
    if [ "$impl" = mpich ]; then n=150 churn=10; else n=1000 churn=50; fi
    out=$(launch 4 overload -- "$check" $n $churn 2>&1); expect_pass "$out" "np 4 bound, overloaded"
    out=$(launch 8 none -- "$check" $n $churn 2>&1); expect_pass "$out" "np 8 unbound" ;;
wait-policies)
    for w in spin yield block; do
        out=$(launch 2 core TOPSYNC_WAIT=$w -- "$check" 1000 5 2>&1); expect_pass "$out" "wait $w"
    done
    out=$(launch 4 overload TOPSYNC_WAIT=yield BARRIER_CHECK_ONLY=topo/tree -- "$check" 1000 5 2>&1)
    expect_pass "$out" "np 4 yield" ;;
preload) # the plain program, not linked with topsync: LD_PRELOAD
    out=$(launch 4 overload LD_PRELOAD=$lib TOPSYNC_VERBOSE=1 -- "$plain" 300 10 2>&1)
    expect_pass "$out" "preloaded"
    grep -q "topsync-mpi: comm of 4 ranks" <<<"$out" && ok || ko "preload: no topsync verbose line"
    out=$(launch 2 core TOPSYNC_EXPECT_PMPI=1 -- "$plain" 200 5 2>&1)
    expect_pass "$out" "plain program without topsync" ;;
split) # concurrent barriers on pairs and halves, np 4 and 8 on this machine's cores,
       # bound and unbound, preloaded into the plain program (and once natively)
    split=$bindir/split_check_$impl
    algs="auto sense-reversing dissemination combining-tree topo/tree"
    for np in 4 8; do
        for bind in overload none; do
            out=$(launch $np $bind LD_PRELOAD=$lib "SPLIT_CHECK_ALGORITHMS=$algs" -- "$split" 800 2>&1)
            expect_pass "$out" "split np $np $bind"
        done
    done
    # the native MPI's, for the check itself (MPICH's busy polling: short)
    out=$(launch 4 overload -- "$split" 100 2>&1)
    expect_pass "$out" "split natively" ;;
pseudo-nodes) # TOPSYNC_NODE_SPLIT: node barriers + PMPI_Barrier among leaders
    # MPICH's own barrier among leaders busy-polls: milliseconds when oversubscribed.
    if [ "$impl" = mpich ]; then n=100; else n=500; fi
    out=$(launch 4 overload TOPSYNC_NODE_SPLIT=2 TOPSYNC_VERBOSE=1 -- "$check" $n 5 2>&1)
    expect_pass "$out" "2 pseudo-nodes"
    grep -q "several nodes" <<<"$out" && ok || ko "pseudo-nodes: verbose line does not say several nodes"
    # barrier_check's even/odd intercommunicator: both groups' sizes (22.24)
    grep -q "intercommunicator of 2 + 2 ranks" <<<"$out" && ok ||
        ko "verbose line of an intercommunicator does not give both groups: $(grep intercomm <<<"$out")"
    out=$(launch 6 none TOPSYNC_NODE_SPLIT=3 -- "$check" $((n / 2)) 2 2>&1)
    expect_pass "$out" "3 pseudo-nodes"
    out=$(launch 3 none TOPSYNC_NODE_SPLIT=3 -- "$check" $n 2 2>&1)
    expect_pass "$out" "one rank per pseudo-node" ;;
fortran)
    for f in barrier_f.f90 barrier_f08.f90; do
        if ! fortran $f "$tmp/linked" linked 2>"$tmp/err" || ! fortran $f "$tmp/plain" plain 2>>"$tmp/err"; then
            ko "$f does not build: $(cat "$tmp/err")"; continue
        fi
        out=$(launch 2 core TOPSYNC_VERBOSE=1 -- "$tmp/linked" 2>&1)
        expect_pass "$out" "$f linked"
        grep -q "topsync-mpi: comm" <<<"$out" && ok || ko "$f linked did not reach topsync"
        out=$(launch 2 core TOPSYNC_VERBOSE=1 LD_PRELOAD=$lib -- "$tmp/plain" 2>&1)
        expect_pass "$out" "$f preloaded"
        grep -q "topsync-mpi: comm" <<<"$out" && ok || ko "$f preloaded did not reach topsync"
    done ;;
abort) # MPI_Abort by one rank: the job ends non-zero, nothing left behind
    marker=$(mktemp)
    out=$(launch 4 overload ABORT_CHECK_MARKER="$marker" -- "$bindir/abort_check_$impl" 2>&1)
    rc=$?
    [ $rc -ne 0 ] && [ $rc -ne 124 ] && ok || ko "abort: exit status $rc"
    # the marker, not the output: the launcher may drop the output of an abort
    grep -q "rank 1 aborts now" "$marker" && ok || ko "abort: program did not run: $out"
    rm -f "$marker" ;;
threads) # MPI_THREAD_MULTIPLE: 4 threads per rank creating communicators and
    # calling MPI_Barrier on each new one; preloaded, every run under a timeout
    # (MPICH busy-polls oversubscribed: natively 3 s per round at np 8). Run 1
    # with the default deferred set-up (one barrier per communicator: none is
    # set up), run 2 with TOPSYNC_MPI_SETUP_AT=1 (every one is, concurrently)
    prog=$bindir/threads_comm_check_$impl runs=0 hangs=0 rounds=20
    [ "$impl" = mpich ] && rounds=3
    for rep in 1 2; do
        if [ $rep = 2 ]; then export TOPSYNC_MPI_SETUP_AT=1; else unset TOPSYNC_MPI_SETUP_AT; fi
        for np_bind in "2 core" "4 none" "8 none"; do
            for mode in create_group dup; do
                set -- $np_bind
                out=$(run_timeout=90 launch "$1" "$2" LD_PRELOAD=$lib -- "$prog" $mode 4 $rounds 2>&1)
                rc=$?
                runs=$((runs + 1))
                [ $rc -eq 124 ] && hangs=$((hangs + 1))
                expect_pass "$out" "threads $mode np $1 ($2), run $rep: rc $rc"
            done
        done
    done
    unset TOPSYNC_MPI_SETUP_AT
    echo "threads: $runs runs, $hangs hung" ;;
setup-at) # deferred set-up: how many communicators are set up, per
    # TOPSYNC_MPI_SETUP_AT (setup_at_check.c); bad values abort with a message
    prog=$bindir/setup_at_check_$impl
    for at_expect in ":6" "1:10" "2:6" "3:3"; do
        at=${at_expect%%:*} expect=${at_expect#*:}
        out=$(launch 2 overload LD_PRELOAD=$lib TOPSYNC_VERBOSE=1 ${at:+TOPSYNC_MPI_SETUP_AT=$at} \
              -- "$prog" 2>&1)
        expect_pass "$out" "setup-at '$at'"
        n=$(printf '%s\n' "$out" | grep -c "^topsync-mpi: comm of")
        [ "$n" = "$expect" ] && ok || ko "setup-at '$at': $n set-ups, expected $expect: $out"
    done
    for bad in 0 -1 x 1000001 " 2" +2; do
        out=$(launch 2 overload LD_PRELOAD=$lib "TOPSYNC_MPI_SETUP_AT=$bad" -- "$prog" 2>&1)
        rc=$?
        [ $rc -ne 0 ] && printf '%s' "$out" | grep -q "TOPSYNC_MPI_SETUP_AT='$bad' is not valid; valid: a whole number from 1 to 1000000" \
            && ok || ko "setup-at '$bad': rc $rc, no message: $out"
    done ;;
abort-comm) # MPI_Abort on a subcommunicator / an intercommunicator while the
    # others wait in MPI_Barrier(MPI_COMM_WORLD): the job ends as natively (non-zero,
    # within the native time + 2 s), in every wait policy
    prog=$bindir/abort_comm_check_$impl
    for kind in sub inter; do
        start=$(ms)
        run_timeout=60 launch 6 none -- "$prog" $kind >/dev/null 2>&1
        native_rc=$? native=$(($(ms) - start))
        for w in spin yield block; do
            start=$(ms)
            out=$(run_timeout=60 launch 6 none LD_PRELOAD=$lib TOPSYNC_WAIT=$w -- "$prog" $kind 2>&1)
            rc=$? took=$(($(ms) - start))
            [ $rc -ne 0 ] && [ $rc -ne 124 ] && ok || ko "abort $kind $w: rc $rc (native $native_rc)"
            [ $took -le $((native + 2000)) ] && ok ||
                ko "abort $kind $w: took ${took} ms, natively ${native} ms"
            grep -q WRONG <<<"$out" && ko "abort $kind $w: $(grep WRONG <<<"$out" | head -1)" || ok
        done
    done ;;
residue) # a dead job's segment (its creator's pid no longer exists) is removed
    # by the next set-up; a live one's is not
    sleep 120 & live=$!
    ( exit 0 ) & dead=$!
    wait $dead
    dead_name=topsync-$dead-0123456789abcdef0123456789abcdef
    live_name=topsync-$live-0123456789abcdef0123456789abcdef
    : >/dev/shm/$dead_name && : >/dev/shm/$live_name && chmod 600 /dev/shm/$dead_name /dev/shm/$live_name
    out=$(launch 2 core -- "$check" 10 1 2>&1)
    expect_pass "$out" "residue run"
    [ ! -e /dev/shm/$dead_name ] && ok || ko "residue: a dead job's segment was left: $dead_name"
    [ -e /dev/shm/$live_name ] && ok || ko "residue: a live job's segment was removed"
    rm -f /dev/shm/$dead_name /dev/shm/$live_name
    kill $live 2>/dev/null
    wait $live 2>/dev/null ;;
bad-config) # invalid variables: a message listing the valid values, job aborted
    out=$(launch 2 core TOPSYNC_BARRIER=fastest -- "$check" 10 1 2>&1)
    rc=$?
    [ $rc -ne 0 ] && grep -q "unknown barrier algorithm 'fastest'; valid: auto," <<<"$out" && ok ||
        ko "bad TOPSYNC_BARRIER: rc=$rc $(tail -3 <<<"$out")"
    out=$(launch 2 core TOPSYNC_WAIT=nap -- "$check" 10 1 2>&1)
    [ $? -ne 0 ] && grep -q "valid: spin, yield, block" <<<"$out" && ok || ko "bad TOPSYNC_WAIT"
    out=$(launch 2 core TOPSYNC_SPIN=-5 -- "$check" 10 1 2>&1)
    [ $? -ne 0 ] && grep -q "TOPSYNC_SPIN='-5' is not valid" <<<"$out" && ok || ko "bad TOPSYNC_SPIN"
    out=$(launch 2 core TOPSYNC_VERBOSE=yes -- "$check" 10 1 2>&1)
    [ $? -ne 0 ] && grep -q "valid: 0, 1" <<<"$out" && ok || ko "bad TOPSYNC_VERBOSE"
    out=$(launch 2 core TOPSYNC_NODE_SPLIT=0 -- "$check" 10 1 2>&1)
    [ $? -ne 0 ] && grep -q "TOPSYNC_NODE_SPLIT='0' is not valid" <<<"$out" && ok || ko "bad TOPSYNC_NODE_SPLIT"
    out=$(launch 2 core TOPSYNC_BARRIER=mpi TOPSYNC_VERBOSE=1 BARRIER_CHECK_ONLY=mpi -- "$check" 100 1 2>&1)
    expect_pass "$out" "TOPSYNC_BARRIER=mpi"
    grep -q "PMPI_Barrier" <<<"$out" && ok || ko "TOPSYNC_BARRIER=mpi verbose line" ;;
timeout) # TOPSYNC_TIMEOUT: rank 1 dies (kill -9) or hangs (SIGSTOP) mid-run; the
    # others end through MPI_Abort naming it, within the timeout, never hang.
    # The launchers kill a job when a rank dies unless told not to
    # (Open MPI --enable-recovery, MPICH -disable-auto-cleanup): then the job
    # must end all the same.
    for mode in kill stop; do
        start=$SECONDS
        out=$(launcher_flags_openmpi=--enable-recovery launcher_flags_mpich=-disable-auto-cleanup \
              launch 4 overload TOPSYNC_TIMEOUT=2 -- "$bindir/timeout_check_$impl" $mode 2>&1)
        took=$((SECONDS - start))
        n=$(grep -cE 'topsync-mpi \(rank [023]\): MPI_Barrier timed out \(TOPSYNC_TIMEOUT\): rank\(s\) 1 of' <<<"$out")
        if [ "$n" -ge 1 ]; then
            ok
        elif [ "$impl" = mpich ] && [ $mode = kill ] &&
             grep -qE "Killed \(signal 9\)|demux engine error" <<<"$out"; then
            ok # hydra's -disable-auto-cleanup is racy: it may still end the job itself
               # (killing the others, or its proxy failing on the dead rank's socket)
        else
            ko "timeout $mode: no timeout message naming rank 1: $(tail -5 <<<"$out")"
        fi
        [ "$took" -lt 60 ] && ok || ko "timeout $mode: took ${took}s"
        grep -q "got through: WRONG" <<<"$out" && ko "timeout $mode: a rank passed the barrier" || ok
    done
    out=$(launch 4 overload TOPSYNC_TIMEOUT=2 -- "$bindir/timeout_check_$impl" kill 2>&1)
    rc=$?
    [ $rc -ne 0 ] && [ $rc -ne 124 ] && ok || ko "timeout kill, default launcher: rc=$rc"
    pkill -9 -f "timeout_check_$impl" 2>/dev/null
    out=$(launch 2 core TOPSYNC_TIMEOUT=soon -- "$check" 10 1 2>&1)
    [ $? -ne 0 ] && grep -q "TOPSYNC_TIMEOUT='soon' is not valid" <<<"$out" && ok || ko "bad TOPSYNC_TIMEOUT" ;;
*)
    echo "unknown case $case" >&2; exit 2 ;;
esac

after=$(shm_list)
if [ "$before" = "$after" ]; then ok; else ko "/dev/shm changed: before [$before] after [$after]"; fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
