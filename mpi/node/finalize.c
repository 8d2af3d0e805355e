/*
 * What libtopsync-mpi holds is given back in MPI_Finalize: the MPI handles
 * it made (MPI_COMM_WORLD's group, the node leaders' communicator, its
 * attribute key), MPI_COMM_WORLD's state, the kept layouts and the parked
 * node barriers. A handle-leak report (Open MPI's mpi_show_handle_leaks,
 * MPICH's debug builds, a checker such as MUST) then names none of ours.
 * The hook is an attribute on MPI_COMM_SELF, whose delete callbacks the
 * MPI standard runs first thing in MPI_Finalize, while every MPI call is
 * still allowed (MPI-2.2 section 8.7.1): no MPI_Finalize of ours for a
 * PMPI tool to chain through. The why: docs/design.md section 8.30.
 */
#include <mpi.h>

#include "node/node.h"

/* Attributes are not inherited by MPI_Comm_dup: the new communicator sets
 * itself up on its first barrier (and a duplicate of MPI_COMM_SELF does
 * not carry the MPI_Finalize hook, finalize.c). Ours, not
 * MPI_COMM_NULL_COPY_FN: that is an address in the MPI library, which
 * libtopsync-mpi may not relocate against (mpi_binding.c). */
int ts_mpi_attr_no_copy(MPI_Comm comm, int key, void *extra, void *in, void *out, int *flag)
{
    (void)comm;
    (void)key;
    (void)extra;
    (void)in;
    (void)out;
    *flag = 0;
    return MPI_SUCCESS;
}

/* what stops serving, run first (ts_mpi_states_release) */
static void (*release_first)(void);

static int at_finalize(MPI_Comm comm, int key, void *value, void *extra)
{
    (void)comm;
    (void)key;
    (void)value;
    (void)extra;
    release_first();         /* no state is made after it */
    ts_mpi_summary();        /* every call counted: the MPI's own from here */
    ts_mpi_parked_release(); /* MPI_COMM_WORLD's node barrier among them now */
    ts_mpi_layouts_release();
    ts_mpi_node_map_release();
    return MPI_SUCCESS;
}

void ts_mpi_finalize_hook(void (*first)(void))
{
    release_first = first;
    int key = MPI_KEYVAL_INVALID;
    if (PMPI_Comm_create_keyval(ts_mpi_attr_no_copy, at_finalize, &key, NULL) != MPI_SUCCESS)
        return;
    PMPI_Comm_set_attr(MPI_COMM_SELF, key, NULL);
    /* freed at once: the attribute keeps the key alive until MPI_Finalize
     * deletes it, and no handle of ours is left then */
    PMPI_Comm_free_keyval(&key);
}
