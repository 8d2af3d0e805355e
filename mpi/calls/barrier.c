/*
 * libtopsync-mpi: an MPI_Barrier that runs topsync's shared-memory barriers
 * inside each node, for Open MPI and MPICH, through the PMPI profiling
 * interface: link it before the MPI library (-ltopsync-mpi-openmpi) or
 * preload it (LD_PRELOAD); the program and the MPI stay as they are.
 * The why: docs/design.md section 8.21.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>

#include <mpi.h>

#include <topsync.h>
#include <topsync/mpi.h>

#include "node/node.h"

/* The intra-node barrier; with TOPSYNC_TIMEOUT set, a hang becomes an abort. */
static inline void node_wait(MPI_Comm comm, struct comm_state *s, bool after_leaders)
{
    if (__builtin_expect(topsync_barrier_wait_checked(s->node.barrier, (unsigned)s->node_rank) < 0,
                         0))
        ts_mpi_timeout_abort(comm, s, s->node.barrier, after_leaders, "MPI_Barrier");
}

int topsync_mpi_barrier(MPI_Comm comm)
{
    bool set_up = false;
    struct comm_state *s = ts_mpi_state_for(comm, "MPI_Barrier", &set_up);
    if (!s) {
        ts_mpi_count(TS_MPI_CALL_OWN);
        return TS_MPI_OWN(Barrier)(comm);
    }
    if (!(s->ops & 1u << TS_MPI_CALL_BARRIER)) { /* TOPSYNC_MPI_OPS leaves it to the MPI */
        ts_mpi_count(TS_MPI_CALL_OWN);
        ts_mpi_call_note(s, TS_MPI_CALL_BARRIER, 1 + TS_MPI_OWN_OFF);
        return set_up ? MPI_SUCCESS : TS_MPI_OWN(Barrier)(comm);
    }
    ts_mpi_count(TS_MPI_CALL_BARRIER);
    ts_mpi_call_note(s, TS_MPI_CALL_BARRIER, TS_MPI_HOW_NODE);
    /* A set-up that ends served ends with an MPI_Allreduce over comm whose
     * result depends on every rank's part (node/setup.c): nobody left it
     * before all had entered this barrier, which it therefore completes
     * (issue 35 item 4: the node barrier after it was 0.3-0.5 us of the
     * 3-4 us such a barrier cost). Every rank skips the same episode. */
    if (set_up)
        return MPI_SUCCESS;
    uint64_t start = ts_mpi_time_start();
    ts_mpi_progress_enter();
    node_wait(comm, s, false);
    int rc = MPI_SUCCESS;
    if (s->mode != MODE_NODE) {
        if (s->node_rank == 0)
            rc = TS_MPI_OWN(Barrier)(s->leaders);
        node_wait(comm, s, true);
    }
    ts_mpi_time_add(TS_MPI_CALL_BARRIER, start);
    return rc;
}

/* ---- the entry points ---------------------------------------------------- */

/* MPI_Init and MPI_Init_thread: the one place where communicators may be
 * made (node_map.c). Passed through a PMPI tool loaded after us
 * (tool_chain.c), which then sees MPI_Init as it expects. */
int MPI_Init(int *argc, char ***argv)
{
    ts_mpi_bind(); /* refuses a process whose MPI we cannot serve */
    int rc;
    TS_MPI_CALL(rc, Init, (argc, argv));
    if (rc == MPI_SUCCESS) {
        int provided = MPI_THREAD_SINGLE;
        PMPI_Query_thread(&provided);
        ts_mpi_node_map_init(provided);
        ts_mpi_world_setup();
    }
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    ts_mpi_bind(); /* refuses a process whose MPI we cannot serve */
    int rc;
    TS_MPI_CALL(rc, Init_thread, (argc, argv, required, provided));
    if (rc == MPI_SUCCESS) {
        ts_mpi_node_map_init(*provided);
        ts_mpi_world_setup();
    }
    return rc;
}

/* topsync's barrier is PMPI_Barrier, so that a PMPI tool loaded before us
 * (its MPI_Barrier calls PMPI_Barrier) still reaches it; MPI_Barrier passes
 * through a tool loaded after us (tool_chain.c). */
int PMPI_Barrier(MPI_Comm comm)
{
    return topsync_mpi_barrier(comm);
}

int MPI_Barrier(MPI_Comm comm)
{
    ts_mpi_fnptr tool = ts_mpi_tool_enter(TS_MPI_FN_Barrier);
    if (__builtin_expect(!tool, 1))
        return topsync_mpi_barrier(comm);
    int rc = ((__typeof__(&PMPI_Barrier))tool)(comm);
    ts_mpi_tool_leave(TS_MPI_FN_Barrier);
    return rc;
}

#ifndef MPI_ABI_VERSION
/* Fortran mpif.h / `use mpi` bindings (all the manglings both MPIs export).
 * The MPI-5 standard ABI's C header has no MPI_Fint: its library serves C.
 * Each mangling passes through a tool's (tool_chain.c) and has its pmpi_
 * twin, which serves: a Fortran tool loaded first calls that. */
typedef void fortran_barrier_fn(MPI_Fint *comm, MPI_Fint *ierr);
static void fortran_serve(MPI_Fint *comm, MPI_Fint *ierr)
{
    int rc = topsync_mpi_barrier(MPI_Comm_f2c(*comm));
    if (ierr)
        *ierr = (MPI_Fint)rc;
}

static void fortran_barrier(enum ts_mpi_fn fn, MPI_Fint *comm, MPI_Fint *ierr)
{
    ts_mpi_fnptr tool = ts_mpi_tool_enter(fn);
    if (!tool) {
        fortran_serve(comm, ierr);
        return;
    }
    ((fortran_barrier_fn *)tool)(comm, ierr);
    ts_mpi_tool_leave(fn);
}

/* `use mpi_f08` (mpi_barrier_f08_): TYPE(MPI_Comm) is one INTEGER passed
 * by reference, ierror is OPTIONAL (NULL when absent); both MPIs name it so. */
#define FORTRAN_BARRIER(name)                          \
    fortran_barrier_fn name, p##name;                  \
    void name(MPI_Fint *comm, MPI_Fint *ierr)          \
    {                                                  \
        fortran_barrier(TS_MPI_FN_##name, comm, ierr); \
    }                                                  \
    void p##name(MPI_Fint *comm, MPI_Fint *ierr)       \
    {                                                  \
        fortran_serve(comm, ierr);                     \
    }
FORTRAN_BARRIER(mpi_barrier)
FORTRAN_BARRIER(mpi_barrier_)
FORTRAN_BARRIER(mpi_barrier__)
FORTRAN_BARRIER(mpi_barrier_f08_)
/* MPI_BARRIER's profiling twin is PMPI_BARRIER, not pMPI_BARRIER */
fortran_barrier_fn MPI_BARRIER, PMPI_BARRIER;
void MPI_BARRIER(MPI_Fint *comm, MPI_Fint *ierr)
{
    fortran_barrier(TS_MPI_FN_MPI_BARRIER, comm, ierr);
}
void PMPI_BARRIER(MPI_Fint *comm, MPI_Fint *ierr)
{
    fortran_serve(comm, ierr);
}
#endif
