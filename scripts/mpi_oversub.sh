#!/usr/bin/env bash
# Oversubscribed and concurrent MPI_Barrier against the MPI's own (issue 11,
# docs/results.md): an unmodified MPI program (scripts/mpi_pairs.c) looping
# on MPI_Barrier over the world, over pairs or over halves, run natively and
# with libtopsync-mpi preloaded, alternating, RUNS times each; the medians,
# their ratio, and the context switches per barrier of the whole job.
#
#   usage: scripts/mpi_oversub.sh [BUILD_DIR]
#   environment: RUNS (default 5), ITERS (barriers per run, or seconds per run
#   with a point: default 0.5), CASES (default: all
#   of the list below, as "mpi:np:bind:split[:busy]" words; busy: that many
#   busy neighbour processes, or np for as many as ranks, run during the
#   case's runs, native and preloaded alike; default 0), TOPSYNC_* variables
#   are passed to the preloaded runs only. An mpi is openmpi or mpich
#   (Debian's) or one of scripts/setup-mpis.sh's: openmpi5, mpich5, impi,
#   mpich5-abi (in TOPSYNC_MPI_MATRIX_DIR, default /var/cache/topsync-mpis);
#   LIB_DIR: where the libtopsync-mpi-*.so are (default BUILD_DIR/mpi).
# Output: which component serves each MPI's own barrier, then a Markdown
# table on stdout; the raw figures in out/mpi-oversub/.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=out/mpi-oversub
mkdir -p "$out"
runs=${RUNS:-5}
iters=${ITERS:-0.5}
cases=${CASES:-"openmpi:2:core:world mpich:2:core:world
openmpi:8:none:world mpich:4:none:world
openmpi:4:none:pairs openmpi:4:core:pairs openmpi:8:none:pairs openmpi:8:core:pairs
openmpi:4:none:halves openmpi:4:core:halves openmpi:8:none:halves openmpi:8:core:halves
mpich:4:none:pairs mpich:4:core:pairs mpich:8:none:pairs mpich:8:core:pairs
mpich:4:none:halves mpich:4:core:halves mpich:8:none:halves mpich:8:core:halves"}
topsync_env=()
for v in $(env | grep -o '^TOPSYNC_[A-Z_]*' || true); do
    topsync_env+=("$v=${!v}")
done

libdir=${LIB_DIR:-$build/mpi}
. scripts/mpi_matrix.sh # abi_of, prefix_of, cc_of, median
for mpi in $(for c in $cases; do echo "${c%%:*}"; done | sort -u); do
    prefix=$(prefix_of "$mpi")
    cc=$(cc_of "$mpi")
    if [ -n "$prefix" ]; then
        [ -x "$cc" ] || { echo "$mpi: $cc not found (scripts/setup-mpis.sh)" >&2; exit 1; }
    fi
    [ -x "/tmp/topsync-pairs-$mpi" ] && [ "/tmp/topsync-pairs-$mpi" -nt scripts/mpi_pairs.c ] ||
        I_MPI_ROOT=$prefix "$cc" -O2 -o "/tmp/topsync-pairs-$mpi" scripts/mpi_pairs.c
done


# run MPI NP BIND SPLIT PRELOAD(0|1) -> "latency_us switches_per_barrier"
run() {
    local mpi=$1 np=$2 bind=$3 split=$4 preload=$5 lib prefix impl
    local prog=/tmp/topsync-pairs-$mpi
    impl=$(abi_of "$mpi") prefix=$(prefix_of "$mpi")
    lib=$(readlink -f "$libdir/libtopsync-mpi-$impl.so")
    local args=() mca=()
    if [ "$impl" = openmpi ]; then
        [ "$bind" = core ] && bind=core:overload-allowed
        args=(mpirun.openmpi --oversubscribe --bind-to "$bind" -np "$np")
        # Open MPI 5: vader is sm; its UCX one-sided component only warns
        [ -n "$prefix" ] && args[0]=$prefix/bin/mpirun mca=(OMPI_MCA_btl=self,sm OMPI_MCA_osc=^ucx)
        [ "$preload" = 1 ] && args+=(-x "LD_PRELOAD=$lib")
        if [ "$preload" = 1 ]; then for e in "${topsync_env[@]}"; do args+=(-x "$e"); done; fi
    else
        args=(mpiexec.mpich -n "$np" -bind-to "$bind")
        [ -n "$prefix" ] && args[0]=$prefix/bin/mpiexec
        [ "$preload" = 1 ] && args+=(-genv LD_PRELOAD "$lib")
        if [ "$preload" = 1 ]; then for e in "${topsync_env[@]}"; do args+=(-genv "${e%%=*}" "${e#*=}"); done; fi
    fi
    # the TOPSYNC_* variables reach the preloaded runs through the launcher only
    local unset=()
    for e in "${topsync_env[@]}"; do unset+=(-u "${e%%=*}"); done
    env "${unset[@]}" "${mca[@]}" timeout 600 "${args[@]}" "$prog" "$split" "$iters"
}

# Which part of each MPI serves its own barrier (issue 24, item 4). Open MPI
# says it: with coll_base_verbose, the component enabled at the highest
# priority on MPI_COMM_WORLD among those that have a blocking barrier (libnbc
# and adapt have none; sync wraps another). MPICH and Intel MPI select inside
# and do not print the choice: say which variable would force one.
native_barrier() {
    local mpi=$1 prefix
    prefix=$(prefix_of "$mpi")
    case $mpi in
    openmpi | openmpi5)
        local launcher=mpirun.openmpi mca=()
        [ -n "$prefix" ] && launcher=$prefix/bin/mpirun mca=(OMPI_MCA_btl=self,sm OMPI_MCA_osc=^ucx)
        env "${mca[@]}" timeout 120 "$launcher" --oversubscribe -np 2 --mca coll_base_verbose 20 \
            "/tmp/topsync-pairs-$mpi" 0 10 2>&1 | awk '
            /new communicator: MPI_COMM_WORLD/ { world = 1; next }
            /new communicator:/ { world = 0 }
            world && /comm_select: selecting/ && /Enabled/ {
                name = $(NF - 3); sub(",", "", name); prio = $(NF - 1) + 0
                if (name ~ /^(basic|tuned|han|sm|self|inter|hcoll|ucc|xhc|acoll)$/ && prio >= best) {
                    best = prio; chosen = name
                }
            }
            END { if (chosen != "") printf "coll/%s (priority %d, coll_base_verbose)\n", chosen, best
                  else print "not reported" }' ;;
    impi)
        echo "Intel MPI's presets, I_MPI_ADJUST_BARRIER=${I_MPI_ADJUST_BARRIER:-unset} (its choice is not printed)" ;;
    *)
        echo "MPICH's internal selection, MPIR_CVAR_BARRIER_INTRA_ALGORITHM=${MPIR_CVAR_BARRIER_INTRA_ALGORITHM:-auto} (its choice is not printed)" ;;
    esac
}
for mpi in $(for c in $cases; do echo "${c%%:*}"; done | sort -u); do
    echo "- native barrier of $mpi: $(native_barrier "$mpi")"
done
echo

# busy neighbours: plain busy loops, unbound, for the whole of a case
burners=()
burn_stop() {
    [ ${#burners[@]} -gt 0 ] || return 0
    kill "${burners[@]}" 2>/dev/null || true
    wait "${burners[@]}" 2>/dev/null || true
    burners=()
}
trap burn_stop EXIT

echo "| case | native us | topsync us | ratio | native cs/barrier | topsync cs/barrier |"
echo "|---|---:|---:|---:|---:|---:|"
for c in $cases; do
    IFS=: read -r impl np bind split busy <<<"$c"
    busy=${busy:-0}
    [ "$busy" = np ] && busy=$np
    [[ $busy =~ ^[0-9]+$ ]] || { echo "mpi_oversub.sh: case $c: busy is a number or np" >&2; exit 2; }
    for _ in $(seq "$busy"); do
        sh -c 'while :; do :; done' &
        burners+=($!)
    done
    code=0
    [ "$split" = pairs ] && code=1
    [ "$split" = halves ] && code=2
    f="$out/$impl-np$np-$bind-$split"
    : >"$f.native"
    : >"$f.topsync"
    for k in $(seq "$runs"); do
        run "$impl" "$np" "$bind" "$code" 0 >>"$f.native"
        run "$impl" "$np" "$bind" "$code" 1 >>"$f.topsync"
    done
    n=$(cut -d' ' -f1 "$f.native" | median)
    t=$(cut -d' ' -f1 "$f.topsync" | median)
    ncs=$(cut -d' ' -f2 "$f.native" | median)
    tcs=$(cut -d' ' -f2 "$f.topsync" | median)
    burn_stop
    ratio=$(awk -v a="$t" -v b="$n" 'BEGIN {printf "%.3f", a / b}')
    label="$impl np $np, bind $bind, $split"
    [ "$busy" -gt 0 ] && label+=", $busy busy"
    echo "| $label | $n | $t | $ratio | $ncs | $tcs |"
done
