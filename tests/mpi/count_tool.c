/*
 * A PMPI tool as profilers write them (mpiP, Score-P's MPI adapter): it
 * defines MPI_X, counts, and calls PMPI_X. Preloaded before or after
 * libtopsync-mpi (tests/mpi/run_mpi_test.sh case "tools"), it must see
 * every call while topsync still serves MPI_Barrier. At MPI_Finalize each
 * rank prints its counts on one line:
 *   count_tool: rank R: init I barrier B isend S irecv R win_create W win_free F
 */
#include <stdio.h>

#include <mpi.h>

static int inits, barriers, isends, irecvs, win_creates, win_frees;

int MPI_Init(int *argc, char ***argv)
{
    inits++;
    return PMPI_Init(argc, argv);
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    inits++;
    return PMPI_Init_thread(argc, argv, required, provided);
}

int MPI_Barrier(MPI_Comm comm)
{
    barriers++;
    return PMPI_Barrier(comm);
}

int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request *request)
{
    isends++;
    return PMPI_Isend(buf, count, type, dest, tag, comm, request);
}

int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Request *request)
{
    irecvs++;
    return PMPI_Irecv(buf, count, type, source, tag, comm, request);
}

int MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                   MPI_Win *win)
{
    win_creates++;
    return PMPI_Win_create(base, size, disp_unit, info, comm, win);
}

int MPI_Win_free(MPI_Win *win)
{
    win_frees++;
    return PMPI_Win_free(win);
}

int MPI_Finalize(void)
{
    int rank = -1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    printf("count_tool: rank %d: init %d barrier %d isend %d irecv %d win_create %d win_free %d\n",
           rank, inits, barriers, isends, irecvs, win_creates, win_frees);
    fflush(stdout);
    return PMPI_Finalize();
}
