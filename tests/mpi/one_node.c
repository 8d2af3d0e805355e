/* A wrong view of the job for negative checks: every rank looks like it
 * runs on one node (MPI_COMM_TYPE_SHARED splits give the whole
 * communicator, every processor name is the same). Preloaded before
 * libtopsync-mpi, over two real nodes: the two-node check must fail. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <string.h>

int PMPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm *out)
{
    if (type == MPI_COMM_TYPE_SHARED)
        return PMPI_Comm_dup(comm, out);
    int (*real)(MPI_Comm, int, int, MPI_Info, MPI_Comm *) =
        (int (*)(MPI_Comm, int, int, MPI_Info, MPI_Comm *))dlsym(RTLD_NEXT, "PMPI_Comm_split_type");
    return real(comm, type, key, info, out);
}

int PMPI_Get_processor_name(char *name, int *len)
{
    strcpy(name, "one-node");
    *len = (int)strlen(name);
    return MPI_SUCCESS;
}
