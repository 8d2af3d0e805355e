/*
 * Counts the MPI handles libtopsync-mpi makes and frees (groups,
 * communicators, attribute keys), preloaded with it (tests/mpi/
 * run_mpi_test.sh case "handles"): libtopsync-mpi calls the PMPI_ names,
 * which this library defines and passes on to the MPI's (the program's own
 * MPI_ calls never come here). After PMPI_Finalize each rank prints
 *   handle_count: rank R: made groups G comms C keyvals K; left groups G' comms C' keyvals K'
 * where "left" must be 0 0 0: everything made was freed by the end of
 * MPI_Finalize (mpi/finalize.c), as a handle-leak report would check.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

static int made_groups, made_comms, made_keyvals;
static int left_groups, left_comms, left_keyvals;

/* the MPI's own definition of `name` (the next object's after this one) */
static void *next(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "handle_count: no %s after this library\n", name);
        abort();
    }
    return f;
}
#define NEXT(name) ((__typeof__(&name))next(#name))

int PMPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
    int rc = NEXT(PMPI_Comm_group)(comm, group);
    if (rc == MPI_SUCCESS && *group != MPI_GROUP_NULL && *group != MPI_GROUP_EMPTY) {
        made_groups++;
        left_groups++;
    }
    return rc;
}

int PMPI_Group_free(MPI_Group *group)
{
    int rc = NEXT(PMPI_Group_free)(group);
    if (rc == MPI_SUCCESS)
        left_groups--;
    return rc;
}

static void comm_made(int rc, MPI_Comm comm)
{
    if (rc == MPI_SUCCESS && comm != MPI_COMM_NULL) {
        made_comms++;
        left_comms++;
    }
}

int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *out)
{
    int rc = NEXT(PMPI_Comm_split)(comm, color, key, out);
    comm_made(rc, *out);
    return rc;
}

int PMPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm *out)
{
    int rc = NEXT(PMPI_Comm_split_type)(comm, type, key, info, out);
    comm_made(rc, *out);
    return rc;
}

int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *out)
{
    int rc = NEXT(PMPI_Comm_dup)(comm, out);
    comm_made(rc, *out);
    return rc;
}

int PMPI_Comm_free(MPI_Comm *comm)
{
    int rc = NEXT(PMPI_Comm_free)(comm);
    if (rc == MPI_SUCCESS)
        left_comms--;
    return rc;
}

int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function *copy, MPI_Comm_delete_attr_function *del,
                            int *keyval, void *extra)
{
    int rc = NEXT(PMPI_Comm_create_keyval)(copy, del, keyval, extra);
    if (rc == MPI_SUCCESS) {
        made_keyvals++;
        left_keyvals++;
    }
    return rc;
}

int PMPI_Comm_free_keyval(int *keyval)
{
    int rc = NEXT(PMPI_Comm_free_keyval)(keyval);
    if (rc == MPI_SUCCESS)
        left_keyvals--;
    return rc;
}

int MPI_Finalize(void)
{
    int rank = -1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int rc = NEXT(PMPI_Finalize)();
    printf("handle_count: rank %d: made groups %d comms %d keyvals %d; left groups %d comms %d "
           "keyvals %d\n",
           rank, made_groups, made_comms, made_keyvals, left_groups, left_comms, left_keyvals);
    fflush(stdout);
    return rc;
}
