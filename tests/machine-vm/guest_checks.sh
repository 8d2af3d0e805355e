#!/usr/bin/env bash
# What runs inside an emulated machine (tests/machine-vm/machine_test.py
# boots it): topsync's own tools and tests on the machine hwloc detects.
#   guest_checks.sh BUILD_DIR OUT PARTICIPANTS EPISODES [full|quick|detect]
# Plans (TCG runs 32-64 vCPUs on the host's cores: a spinning episode costs
# seconds, an MPI communicator's set-up tens):
#   full    every algorithm under every wait policy; MPI every algorithm
#           under every map-by;
#   quick   every algorithm under block, yield and spin for topo with a
#           quarter of the episodes; MPI's topo barrier with Open MPI
#           map-by numa, MPICH map-by socket, Open MPI 2 x cores unbound;
#   detect  what depends on the machine's shape: topo, dissemination and
#           mcs under block, the SIGKILL check of topo, the pthread
#           drop-in with a thread per PU, both MPIs map-by numa;
#   calibrate  only the speed workload, 7 times (guest_timing.sh's idle_ms).
set -u
build=$1 out=$2 n=$3 episodes=$4 plan=${5:-quick}
case $plan in full | quick | detect | calibrate) ;; *) echo "FAIL: plan $plan; valid: full, quick, detect, calibrate"; exit 2 ;; esac
src=$(cd "$(dirname "$0")/../.." && pwd)
failed=0 too_slow=0
t0=$(date +%s)
pass() { echo "PASS: $1 ($(($(date +%s) - t0)) s)"; t0=$(date +%s); }
fail() { echo "FAIL: $1"; failed=$((failed + 1)); t0=$(date +%s); }

# limited/timed_out: timeouts scaled to the guest's speed (guest_timing.sh)
. "$(dirname "$0")/guest_timing.sh" || exit 2
if [ "$plan" = calibrate ]; then # the idle reference: 7 runs of the workload
    for k in 1 2 3 4 5 6 7; do echo "calibrate: $(calibrate) ms"; done
    exit 0
fi
# check NAME COMMAND...: the command's exit status, its output kept on
# failure; 600 s at most, scaled (a hang is a failure that names its check)
check() {
    local name=$1
    shift
    limited 600 "$@"
    if [ $rc = 0 ]; then
        pass "$name"
    elif [ -n "$timed_out" ]; then
        timed_out "$name"
    else
        fail "$name: $(tail -n 5 <<<"$log")"
    fi
}

echo "machine: $(nproc) PUs, $(ls -d /sys/devices/system/node/node* | wc -l) NUMA nodes," \
     "host name $(hostname)"
info=$build/tools/topsync-info
cores=$("$info" --json --np 1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["cores"])')

# 1. detection and placement: the host compares these with its expectation
for map in core numa socket; do
    check "topsync-info --np $cores --map-by $map" \
        sh -c "'$info' --json --np $cores --map-by $map > '$out/info-$map.json'"
done

# 2. every algorithm, threads and processes bound as mpirun --bind-to core
#    would, the invariant checked every episode, under every wait policy
stress=$build/tests/stress/stress_barrier
for alg in $("$info" --list-algorithms); do
    if [ "$plan" = detect ]; then
        case $alg in topo | dissemination | mcs) ;; *) continue ;; esac
    fi
    for wait in block yield spin; do
        count=$episodes
        if [ "$plan" != full ] && [ $wait != block ]; then
            [ "$plan" = quick ] || continue
            [ "$alg" = topo ] || continue
            count=$((episodes / 4))
        fi
        check "barrier $alg, $n threads and processes, wait $wait, $count episodes" \
            "$stress" --algorithm "$alg" --wait $wait --bind-to core --map-by core \
            --threads "$n" --processes "$n" --episodes "$count"
    done
    [ "$plan" = detect ] && [ "$alg" != topo ] && continue
    check "barrier $alg: SIGKILL of rank 5 of $n named within TOPSYNC_TIMEOUT" \
        "$stress" --algorithm "$alg" --processes "$n" --kill 5 --timeout 3 --episodes 40
done
# the invariant checks themselves: a rank let through episode 10 without
# waiting must fail the run, threads and processes
log=$(timeout -k 10 120 "$stress" --algorithm topo --bind-to core --map-by core --threads "$n" \
      --processes "$n" --episodes 40 --skip-wait 5:10 --timeout 3 2>&1)
if grep -q "^0 passed, 2 failed" <<<"$log"; then
    pass "negative: a rank let through an episode it skipped fails the check"
else
    fail "negative: a rank let through an episode it skipped was not caught: $(tail -n 3 <<<"$log")"
fi
check "barrier topo over numa, $n threads bound map-by numa" \
    "$stress" --algorithm topo --bind-to core --map-by numa --threads "$n" --episodes "$episodes"

# 3. the pthread drop-in's conformance program, preloaded
threads_list="32 64"
[ "$plan" != full ] && threads_list=$n
for threads in $threads_list; do
    check "pthread drop-in conformance, $threads threads" \
        env LD_PRELOAD="$build/pthread/libtopsync-pthread.so" \
        "$build/tests/pthread/pthread_conformance" $threads $((episodes * 4))
done

# 4. RCL: servers, memory and workers on the nodes the design says
check "RCL placement, RCLAwareMalloc, RCLHierarchicalAffinity" "$build/tests/machine-vm/rcl_machine_check"

# 5. MPI, preloaded into the plain check program, bound by the MPI itself
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
mpi_check() { # IMPL NP BIND-ARGS...
    local impl=$1 np=$2 log
    shift 2
    local what="MPI $impl np $np $*"
    local lib=$build/mpi/libtopsync-mpi-$impl.so prog=$build/tests/mpi/barrier_check_plain_$impl
    if [ "$impl" = openmpi ]; then
        limited 600 mpirun.openmpi -np "$np" "$@" -x LD_PRELOAD="$lib" -x TOPSYNC_VERBOSE=2 \
              -x BARRIER_CHECK_ONLY="${only:-}" "$prog" "$mpi_episodes" 2
    else
        limited 600 mpiexec.mpich -n "$np" "$@" -genv LD_PRELOAD "$lib" \
              -genv TOPSYNC_VERBOSE 2 -genv BARRIER_CHECK_ONLY "${only:-}" "$prog" "$mpi_episodes" 2
    fi
    if [ -n "$timed_out" ]; then
        timed_out "$what"
        return
    fi
    if [ $rc != 0 ] || ! grep -qE '^[1-9][0-9]* passed, 0 failed$' <<<"$log"; then
        fail "$what: exit $rc: $(grep -E 'FAIL|rror|passed' <<<"$log" | head -n 5)"
        return
    fi
    local line
    line=$(grep -m1 "topsync-mpi: comm of $np ranks, one node: .*algorithm topo" <<<"$log")
    if [ -z "$line" ]; then
        fail "$what: no topsync-mpi line for a topo barrier of $np ranks"
    elif [ "$expect_bound" = 1 ] && grep -q "ranks not bound" <<<"$line"; then
        fail "$what: ranks seen as not bound: $line"
    elif [ "$expect_bound" = 1 ] && ! grep -q "NUMANode=" <<<"$line"; then
        fail "$what: no NUMA level used: $line"
    elif [ "$expect_bound" = 0 ] && ! grep -q "ranks not bound" <<<"$line"; then
        fail "$what: unbound ranks seen as bound: $line"
    else
        echo "  $line"
        pass "$what"
    fi
}
mpi_episodes=$((episodes / 10))
expect_bound=1
case $plan in
full) openmpi_maps="core numa socket" mpich_maps="core numa socket" only="" ;;
quick) openmpi_maps=numa mpich_maps=socket only=topo ;;
detect) openmpi_maps=numa mpich_maps=numa only=topo ;;
esac
# A NUMA node without CPUs (machine C) defeats both MPIs' own map-by numa,
# natively, without topsync (Open MPI 4.1: "binding more processes than
# cpus", MPICH 4.0's hydra: an assertion): say so, and map by socket there.
for node in /sys/devices/system/node/node*; do
    [ -n "$(tr -d '[:space:]' < "$node/cpulist")" ] && continue
    for launcher in "mpirun.openmpi --bind-to core --map-by numa" "mpiexec.mpich -bind-to core -map-by numa"; do
        if timeout 120 $launcher -n "$cores" true > /tmp/native.log 2>&1; then
            echo "NOTE: natively, $launcher works with the CPU-less ${node##*/}"
        else
            echo "NOTE: natively, $launcher fails with the CPU-less ${node##*/}:" \
                 "$(grep -m1 -E 'binding more|assert|rror' /tmp/native.log)"
        fi
    done
    openmpi_maps=${openmpi_maps/numa/socket} mpich_maps=${mpich_maps/numa/socket}
    break
done
for map in $openmpi_maps; do mpi_check openmpi "$cores" --bind-to core --map-by "$map"; done
for map in $mpich_maps; do mpi_check mpich "$cores" -bind-to core -map-by "$map"; done
expect_bound=0
only=topo
if [ "$plan" != detect ]; then
    mpi_check openmpi $((cores * 2)) --oversubscribe --bind-to none
fi
if [ "$plan" = full ]; then
    mpi_check mpich $((cores * 2)) -bind-to none
fi

# 5b. the collectives (tests/mpi/coll_check.c, preloaded), every rank of the
#     machine bound by the MPI, on the groups of its levels: every predefined
#     type and op, roots, in place, on the world (the split and dup too
#     take twice as long: 155040 checks at np 32 took 600 s under TCG)
coll_mpi_check() { # IMPL LAUNCHER-ARGS...
    local impl=$1
    shift
    local lib=$build/mpi/libtopsync-mpi-$impl.so prog=$build/tests/mpi/coll_check_$impl
    local what="MPI collectives $impl np $cores $*"
    if [ "$impl" = openmpi ]; then
        limited 600 mpirun.openmpi -np "$cores" "$@" -x LD_PRELOAD="$lib" -x TOPSYNC_VERBOSE=2 "$prog" 1 world
    else
        limited 600 mpiexec.mpich -n "$cores" "$@" -genv LD_PRELOAD "$lib" -genv TOPSYNC_VERBOSE 2 "$prog" 1 world
    fi
    if [ -n "$timed_out" ]; then
        timed_out "$what"
    elif [ $rc != 0 ] || ! grep -qE '^[1-9][0-9]* passed, 0 failed$' <<<"$log"; then
        fail "$what: exit $rc: $(grep -E 'FAIL|rror|passed' <<<"$log" | head -n 5)"
    elif ! grep -q "topsync-mpi: MPI_Allreduce up to 4096 B: rules" <<<"$log" ||
        ! grep -q "topsync-mpi: comm of $cores ranks, one node: .*NUMANode=" <<<"$log"; then
        fail "$what: topsync did not serve them on the NUMA groups: $(grep -m3 'topsync-mpi: \(comm\|MPI_Allreduce up\)' <<<"$log")"
    else
        pass "$what: $(grep -E 'passed, 0 failed' <<<"$log")"
    fi
}
if [ "$plan" != detect ]; then
    coll_mpi_check openmpi --bind-to core --map-by "${openmpi_maps##* }"
    coll_mpi_check mpich -bind-to core -map-by "${mpich_maps##* }"
fi

# 6. topsync-tune with small options, then topsync-info --explain names the file
# (a thread and a process per core in the full plan; 8 otherwise: every
# candidate at 32 takes 9 minutes under TCG)
tuning=/tmp/topsync-tuning.json
tuned=8
[ "$plan" = full ] && tuned=$cores
if "$build/bench/topsync-tune" --threads "$tuned" --processes "$tuned" --iterations 20 --runs 1 \
        --no-c2c --output "$tuning" > /tmp/tune.log 2>&1; then
    mine=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["fingerprint"])' "$tuning")
    # auto takes an entry only from a file of this machine's fingerprint
    explain=$(TOPSYNC_TUNING=$tuning "$info" --explain --np "$tuned" 2>&1)
    if [ -z "$mine" ]; then
        fail "topsync-tune: no fingerprint in $tuning"
    elif ! grep -q "auto: tuning file $tuning, entry $tuned threads" <<<"$explain"; then
        fail "topsync-info --explain does not name $tuning: $explain"
    else
        pass "topsync-tune, fingerprint $mine, its entry named by --explain"
    fi
else
    fail "topsync-tune: $(tail -n 5 /tmp/tune.log)"
fi

ls /dev/shm | grep -qi topsync && fail "topsync segments left in /dev/shm: $(ls /dev/shm)"
echo "guest checks: $failed failed, $too_slow too slow to tell"
[ $failed != 0 ] && exit 1
[ $too_slow != 0 ] && exit 77
exit 0
