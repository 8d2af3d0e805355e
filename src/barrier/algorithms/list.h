/*
 * Every barrier algorithm, once (docs/design.md section 3): X(STEM, NAME)
 * for src/barrier/algorithms/STEM.c, which defines TS_ALGO(STEM), and the
 * name users give. The registry (barrier.c), the simulator's table
 * (model/sim_barrier.c) and CMake's source list (parsed from this file)
 * all come from here, in this order. One entry per line, as CMake reads it.
 */
#ifndef TOPSYNC_SRC_BARRIER_ALGORITHMS_LIST_H
#define TOPSYNC_SRC_BARRIER_ALGORITHMS_LIST_H

#define TS_ALGORITHM_LIST(X)                              \
    X(sense_reversing, "sense-reversing")                 \
    X(sense_reversing_counter, "sense-reversing-counter") \
    X(sense_reversing_gr, "sense-reversing-gr")           \
    X(combining_tree, "combining-tree")                   \
    X(mcs, "mcs")                                         \
    X(tournament, "tournament")                           \
    X(dissemination, "dissemination")                     \
    X(topo, "topo")

#endif
