/* A wrong MPI_Barrier for negative checks: it returns at once, without
 * waiting for anyone. Preloaded, the checks (nodes_check) must fail. */
#include <mpi.h>

int MPI_Barrier(MPI_Comm comm)
{
    (void)comm;
    return MPI_SUCCESS;
}
