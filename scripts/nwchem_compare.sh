#!/usr/bin/env bash
# NWChem (one-sided ARMCI over MPI, which needs MPI's progress inside
# MPI_Barrier; issue 35 item 3), natively and with libtopsync-mpi preloaded:
# a small water input (B3LYP/6-31G*, geometry optimisation), RUNS
# interleaved pairs per MPI flavour. Checks that the total energies agree
# (to 1e-8 Hartree: native runs differ by about 3e-11) and prints a Markdown table of the median wall times and their
# ratio. Debian's nwchem-mpich / nwchem-openmpi (apt-get install); MPICH
# 4.0.2's build needs ARMCI_USE_WIN_ALLOCATE=0 even natively.
#
#   usage: scripts/nwchem_compare.sh [BUILD_DIR]
#   environment: FLAVOURS (default: "mpich openmpi", those installed),
#   NP (default 2), BIND (core | none, default core), RUNS (default 3)
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(readlink -f "${1:-build}")
flavours=${FLAVOURS:-mpich openmpi} np=${NP:-2} bind=${BIND:-core} runs=${RUNS:-3}
case $bind in core | none) ;; *) echo "nwchem_compare: BIND=$bind: valid: core, none" >&2; exit 2 ;; esac
. scripts/mpi_matrix.sh # launcher_of, median
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/water.nw" <<'NW'
start water
title "water B3LYP/6-31G* optimisation"
memory total 400 mb
geometry units angstrom
  O   0.000   0.000   0.120
  H   0.000   0.760  -0.480
  H   0.000  -0.760  -0.480
end
basis
  * library 6-31G*
end
dft
  xc b3lyp
end
task dft optimize
NW

echo "| MPI | np, binding | native s | preloaded s | preloaded / native | total energy | spread of all runs |"
echo "|---|---|---:|---:|---:|---|---|"
for flavour in $flavours; do
    exe=/usr/bin/nwchem.$flavour
    lib=$build/mpi/libtopsync-mpi-$flavour.so
    if [ ! -x "$exe" ] || [ ! -e "$lib" ]; then
        echo "nwchem_compare: $flavour skipped: no $exe (apt-get install nwchem-$flavour) or no $lib" >&2
        continue
    fi
    envs=()
    [ "$flavour" = mpich ] && envs=(ARMCI_USE_WIN_ALLOCATE=0)
    : >"$tmp/native" && : >"$tmp/preloaded" && : >"$tmp/energies"
    for k in $(seq "$runs"); do
        for how in native preloaded; do
            if [ "$how" = preloaded ]; then
                launcher_of "$flavour" "$np" "$bind" "${envs[@]}" "LD_PRELOAD=$lib"
            else
                launcher_of "$flavour" "$np" "$bind" "${envs[@]}"
            fi
            rm -rf "$tmp/run" && mkdir "$tmp/run" && cp "$tmp/water.nw" "$tmp/run/"
            start=$(date +%s.%N)
            (cd "$tmp/run" && timeout 900 "${launcher[@]}" "$exe" water.nw) \
                >"$tmp/out" 2>&1 || { tail -20 "$tmp/out" >&2; echo "nwchem_compare: $flavour $how failed" >&2; exit 1; }
            end=$(date +%s.%N)
            awk -v a="$start" -v b="$end" 'BEGIN {printf "%.3f\n", b - a}' >>"$tmp/$how"
            energy=$(grep "Total DFT energy" "$tmp/out" | tail -1 | awk '{print $NF}')
            [ -n "$energy" ] || { echo "nwchem_compare: $flavour $how: no energy" >&2; exit 1; }
            echo "$energy" >>"$tmp/energies"
        done
    done
    # NWChem's own runs differ in the last digits (its parallel sums'
    # order varies: 3e-11 Hartree between native runs here): the energies
    # must agree to 1e-8, far below any chemical meaning and far above that
    spread=$(sort -g "$tmp/energies" | awk 'NR == 1 {lo = $1} {hi = $1} END {printf "%.1e", hi - lo}')
    if ! awk -v s="$spread" 'BEGIN {exit !(s <= 1e-8)}'; then
        echo "nwchem_compare: $flavour: the energies differ by $spread: $(sort -u "$tmp/energies" | tr '\n' ' ')" >&2
        exit 1
    fi
    n=$(median <"$tmp/native") p=$(median <"$tmp/preloaded")
    ratio=$(awk -v n="$n" -v p="$p" 'BEGIN {printf "%.2f", (n > 0 ? p / n : 0)}')
    echo "| $flavour | $np, $bind | $n | $p | $ratio | $(head -1 "$tmp/energies") | $spread |"
done
