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
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

/* one kind of handle: how many made, how many of them not freed yet */
struct count {
    int made, left;
};
static struct count groups, comms, keyvals;

/* ok: the call succeeded and gave a handle (not a null one) */
static void made(struct count *c, bool ok)
{
    if (ok) {
        c->made++;
        c->left++;
    }
}

static void freed(struct count *c, int rc)
{
    if (rc == MPI_SUCCESS)
        c->left--;
}

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
    made(&groups, rc == MPI_SUCCESS && *group != MPI_GROUP_NULL && *group != MPI_GROUP_EMPTY);
    return rc;
}

int PMPI_Group_free(MPI_Group *group)
{
    int rc = NEXT(PMPI_Group_free)(group);
    freed(&groups, rc);
    return rc;
}

int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *out)
{
    int rc = NEXT(PMPI_Comm_split)(comm, color, key, out);
    made(&comms, rc == MPI_SUCCESS && *out != MPI_COMM_NULL);
    return rc;
}

int PMPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm *out)
{
    int rc = NEXT(PMPI_Comm_split_type)(comm, type, key, info, out);
    made(&comms, rc == MPI_SUCCESS && *out != MPI_COMM_NULL);
    return rc;
}

int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *out)
{
    int rc = NEXT(PMPI_Comm_dup)(comm, out);
    made(&comms, rc == MPI_SUCCESS && *out != MPI_COMM_NULL);
    return rc;
}

int PMPI_Comm_free(MPI_Comm *comm)
{
    int rc = NEXT(PMPI_Comm_free)(comm);
    freed(&comms, rc);
    return rc;
}

int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function *copy, MPI_Comm_delete_attr_function *del,
                            int *keyval, void *extra)
{
    int rc = NEXT(PMPI_Comm_create_keyval)(copy, del, keyval, extra);
    made(&keyvals, rc == MPI_SUCCESS);
    return rc;
}

int PMPI_Comm_free_keyval(int *keyval)
{
    int rc = NEXT(PMPI_Comm_free_keyval)(keyval);
    freed(&keyvals, rc);
    return rc;
}

int MPI_Finalize(void)
{
    int rank = -1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int rc = NEXT(PMPI_Finalize)();
    printf("handle_count: rank %d: made groups %d comms %d keyvals %d; left groups %d comms %d "
           "keyvals %d\n",
           rank, groups.made, comms.made, keyvals.made, groups.left, comms.left, keyvals.left);
    fflush(stdout);
    return rc;
}
