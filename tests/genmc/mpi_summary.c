/*
 * GenMC harness: the end-of-job summary's counters (mpi/node/summary.c, included
 * as it is). Two threads each count served calls (each registers its block
 * of counters on its first call, concurrently); the finalizing thread,
 * ordered after both as MPI orders every thread's last call before
 * MPI_Finalize (here by pthread_join), sums them. Under every RC11
 * execution the sums are exact: the owner-only relaxed load and store lose
 * no count, and the registration under blocks_lock loses no block.
 * Mutant, caught: -DNO_BLOCKS_LOCK (the registration's push without the
 * lock: the two pushes race on the list head, a data race GenMC reports).
 * The MPI around it is stood in for: MPI_Init was ours (the collective
 * sum runs), the reduce over one rank copies, TOPSYNC_VERBOSE is off.
 * Bounds: 2 counting threads, 2 calls each, and the finalizer.
 */
#include "genmc_shim.h"

#include <assert.h>

#ifdef NO_BLOCKS_LOCK
#define pthread_mutex_lock(m) ((void)(m), 0)
#define pthread_mutex_unlock(m) ((void)(m), 0)
#endif
#include "../../mpi/node/summary.c"
#ifdef NO_BLOCKS_LOCK
#undef pthread_mutex_lock
#undef pthread_mutex_unlock
#endif

ts_mpi_fnptr ts_mpi_own_fn[TS_MPI_FN_COUNT];
/* the summary's reduction: the calls per kind, their times, then the
 * node barriers' switches (summary.c) */
#define REDUCED (2 * TS_MPI_CALL_KINDS + 1)
static long long reduced[REDUCED];
static int reduced_count;

bool ts_mpi_init_seen(void)
{
    return true;
}

int ts_mpi_verbose(void)
{
    return 0;
}

int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
    (void)comm;
    *rank = 0;
    return MPI_SUCCESS;
}

int PMPI_Comm_size(MPI_Comm comm, int *size)
{
    (void)comm;
    *size = 1;
    return MPI_SUCCESS;
}

/* the MPI's own MPI_Reduce over one rank: the sum is this rank's part */
static int one_rank_reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt,
                           MPI_Op op, int root, MPI_Comm comm)
{
    (void)recvbuf;
    (void)dt;
    (void)op;
    (void)root;
    (void)comm;
    const long long *in = sendbuf;
    reduced_count = count;
    for (int k = 0; k < count && k < REDUCED; k++)
        reduced[k] = in[k];
    return MPI_SUCCESS;
}

static void *counting(void *arg)
{
    enum ts_mpi_call kind = (enum ts_mpi_call)(intptr_t)arg;
    ts_mpi_count(kind);
    ts_mpi_count(TS_MPI_CALL_BARRIER);
    return NULL;
}

int main(void)
{
    ts_mpi_own_fn[TS_MPI_FN_Reduce] = (ts_mpi_fnptr)one_rank_reduce;
    pthread_t a, b;
    pthread_create(&a, NULL, counting, (void *)(intptr_t)TS_MPI_CALL_ALLREDUCE);
    pthread_create(&b, NULL, counting, (void *)(intptr_t)TS_MPI_CALL_BCAST);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    ts_mpi_summary();
    assert(reduced[TS_MPI_CALL_BARRIER] == 2);
    assert(reduced[TS_MPI_CALL_ALLREDUCE] == 1);
    assert(reduced[TS_MPI_CALL_BCAST] == 1);
    assert(reduced[TS_MPI_CALL_REDUCE] == 0 && reduced[TS_MPI_CALL_OWN] == 0);
    /* TOPSYNC_VERBOSE off: nothing timed; no node barrier tracked */
    assert(reduced_count == REDUCED);
    for (int k = TS_MPI_CALL_KINDS; k < REDUCED; k++)
        assert(reduced[k] == 0);
    return 0;
}
