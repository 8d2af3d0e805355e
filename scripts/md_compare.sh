#!/usr/bin/env bash
# LAMMPS and GROMACS (Debian's builds, on Debian's default MPI, Open MPI)
# natively and with libtopsync-mpi preloaded (issue 35 item 5): RUNS
# interleaved pairs per application. The numeric results must be identical,
# to the last printed digit: LAMMPS' thermo output of every step (a 4000-atom
# Lennard-Jones melt, 300 steps, thermo every step: an MPI_Allreduce each),
# GROMACS' potential, kinetic and total energy and pressure of every step
# (510 SPC/E waters with PME, 200 steps, mdrun -reprod). Prints a Markdown
# table of the median wall times and their ratio.
#
#   usage: scripts/md_compare.sh [BUILD_DIR]
#   environment: APPS (default "lammps gromacs", those installed), NP
#   (default 2), BIND (core | none, default core), RUNS (default 3)
# Exit 77 when neither application is installed (apt-get install lammps
# gromacs).
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(readlink -f "${1:-build}")
apps=${APPS:-lammps gromacs} np=${NP:-2} bind=${BIND:-core} runs=${RUNS:-3}
case $bind in core | none) ;; *) echo "md_compare: BIND=$bind: valid: core, none" >&2; exit 2 ;; esac
case $runs in '' | *[!0-9]* | 0) echo "md_compare: RUNS=$runs: valid: a whole number >= 1" >&2; exit 2 ;; esac
export GMX_MAXBACKUP=-1
. scripts/mpi_matrix.sh # launcher_of, median
lib=$build/mpi/libtopsync-mpi-openmpi.so
[ -e "$lib" ] || { echo "md_compare: $lib not built" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/in.melt" <<'LMP'
units           lj
atom_style      atomic
lattice         fcc 0.8442
region          box block 0 10 0 10 0 10
create_box      1 box
create_atoms    1 box
mass            1 1.0
velocity        all create 3.0 87287 loop geom
pair_style      lj/cut 2.5
pair_coeff      1 1 1.0 1.0 2.5
neighbor        0.3 bin
neigh_modify    every 20 delay 0 check no
fix             1 all nve
thermo_style    custom step temp epair emol etotal press
thermo_modify   format float %.12g
thermo          1
run             300
LMP

# GROMACS' input: a water box made by its own tools, once
gromacs_input() {
    mkdir -p "$tmp/gmx"
    (cd "$tmp/gmx" &&
        gmx solvate -cs spc216.gro -box 2.5 2.5 2.5 -o water.gro >solvate.log 2>&1 &&
        printf '#include "oplsaa.ff/forcefield.itp"\n#include "oplsaa.ff/spce.itp"\n[ system ]\nwater\n[ molecules ]\nSOL %s\n' \
            "$(grep -c OW water.gro)" >topol.top &&
        printf '%s\n' "integrator = md" "nsteps = 200" "dt = 0.002" "cutoff-scheme = Verlet" \
            "coulombtype = PME" "rcoulomb = 1.0" "rvdw = 1.0" "nstenergy = 1" "nstcalcenergy = 1" \
            "nstlog = 20" "tcoupl = no" "constraints = h-bonds" "gen-vel = yes" "gen-temp = 300" \
            "gen-seed = 1" >md.mdp &&
        gmx grompp -f md.mdp -c water.gro -p topol.top -o topol.tpr >grompp.log 2>&1) ||
        { tail -20 "$tmp/gmx/"*.log >&2; echo "md_compare: GROMACS' input could not be made" >&2; exit 1; }
}

# run APP HOW: the application once; its results in $tmp/results
run() {
    local app=$1 how=$2
    if [ "$how" = preloaded ]; then
        launcher_of openmpi "$np" "$bind" "LD_PRELOAD=$lib"
    else
        launcher_of openmpi "$np" "$bind"
    fi
    rm -rf "$tmp/run" && mkdir "$tmp/run"
    case $app in
    lammps)
        (cd "$tmp/run" && timeout 600 "${launcher[@]}" lmp -in "$tmp/in.melt" -log none \
            -screen screen.txt) >"$tmp/out" 2>&1 || { tail -20 "$tmp/out" "$tmp/run/screen.txt" >&2; return 1; }
        # the thermo lines: step, temperature, pair energy, molecular, total, pressure
        grep -E '^ +[0-9]+ +[-0-9.e+]+ +[-0-9.e+]+ ' "$tmp/run/screen.txt" >"$tmp/results" ;;
    gromacs)
        (cd "$tmp/run" && timeout 600 "${launcher[@]}" gmx_mpi mdrun -s "$tmp/gmx/topol.tpr" \
            -ntomp 1 -nb cpu -reprod -notunepme) >"$tmp/out" 2>&1 || { tail -20 "$tmp/out" >&2; return 1; }
        (cd "$tmp/run" && printf 'Potential\nKinetic-En.\nTotal-Energy\nPressure\n\n' |
            gmx energy -f ener.edr -o energies.xvg) >"$tmp/out.energy" 2>&1 ||
            { tail -20 "$tmp/out.energy" >&2; return 1; }
        grep -v '^[#@]' "$tmp/run/energies.xvg" >"$tmp/results" ;;
    esac
    [ -s "$tmp/results" ] || { echo "md_compare: $app $how printed no results" >&2; return 1; }
}

found=0
echo "| application | np, binding | native s | preloaded s | preloaded / native | results |"
echo "|---|---|---:|---:|---:|---|"
for app in $apps; do
    case $app in
    lammps) exe=lmp ;;
    gromacs) exe=gmx_mpi ;;
    *) echo "md_compare: APPS: '$app'; valid: lammps, gromacs" >&2; exit 2 ;;
    esac
    if ! command -v $exe >/dev/null; then
        echo "md_compare: $app skipped: no $exe (apt-get install $app)" >&2
        continue
    fi
    found=$((found + 1))
    [ $app = gromacs ] && gromacs_input
    : >"$tmp/native" && : >"$tmp/preloaded"
    rm -f "$tmp/reference"
    for k in $(seq "$runs"); do
        for how in native preloaded; do
            start=$(date +%s.%N)
            run $app $how || { echo "md_compare: $app $how failed" >&2; exit 1; }
            end=$(date +%s.%N)
            awk -v a="$start" -v b="$end" 'BEGIN {printf "%.3f\n", b - a}' >>"$tmp/$how"
            if [ ! -e "$tmp/reference" ]; then
                cp "$tmp/results" "$tmp/reference"
            elif ! cmp -s "$tmp/reference" "$tmp/results"; then
                echo "md_compare: $app $how run $k: results differ from the first native run:" >&2
                diff "$tmp/reference" "$tmp/results" | head -10 >&2 || true
                exit 1
            fi
        done
    done
    n=$(median <"$tmp/native") p=$(median <"$tmp/preloaded")
    ratio=$(awk -v n="$n" -v p="$p" 'BEGIN {printf "%.2f", (n > 0 ? p / n : 0)}')
    echo "| $app | $np, $bind | $n | $p | $ratio | identical ($(wc -l <"$tmp/reference") lines, $((2 * runs)) runs) |"
done
if [ $found = 0 ]; then
    echo "md_compare: SKIPPED: neither LAMMPS nor GROMACS is installed (apt-get install lammps gromacs)" >&2
    exit 77
fi
