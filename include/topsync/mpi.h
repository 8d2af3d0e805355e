/*
 * topsync MPI: the barrier behind libtopsync-mpi-{openmpi,mpich}'s
 * MPI_Barrier, callable directly.
 *
 * Linking (-ltopsync-mpi-openmpi before -lmpi) or preloading the library
 * replaces MPI_Barrier and the Fortran mpi_barrier entry points; this header
 * is only needed to call topsync's barrier under another name.
 */
#ifndef TOPSYNC_MPI_H
#define TOPSYNC_MPI_H

/* C++: this header needs the MPI's C API only. Included first, it keeps
 * Open MPI 4's and MPICH's deprecated C++ bindings (MPI::Comm...) out,
 * since they need a library of their own (libmpi_cxx) that a C++ consumer
 * of topsync does not otherwise link. Code that uses those bindings
 * includes <mpi.h> before this header (and links them, e.g. with mpicxx):
 * then these definitions come too late to change anything. Nothing here
 * reaches the consumer's other files (the .pc files define nothing). */
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * MPI_Barrier(comm) with topsync inside each node (see docs/guide/mpi.md for the
 * set-up, TOPSYNC_BARRIER / TOPSYNC_WAIT / TOPSYNC_NODE_SPLIT /
 * TOPSYNC_VERBOSE). Same guarantees as MPI_Barrier: no rank returns before
 * every rank of comm has called it; memory written before the call by any
 * rank of the node is visible after it (the barrier is a release/acquire
 * pair, as in topsync_barrier_wait).
 */
int topsync_mpi_barrier(MPI_Comm comm);

/* The algorithm comm's barrier runs ("mpi" when it passes through to
 * PMPI_Barrier); sets the communicator up if needed (collective then: a
 * communicator other than MPI_COMM_WORLD is otherwise set up only at its
 * TOPSYNC_MPI_SETUP_AT-th barrier, the second by default). The string is
 * owned by topsync and stays valid until comm is freed (MPI_Comm_free or
 * MPI_Finalize); later calls, for comm or any other, do not change it. */
const char *topsync_mpi_describe(MPI_Comm comm);

#ifdef __cplusplus
}
#endif

#endif
