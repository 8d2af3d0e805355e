/*
 * coll/topsync: an Open MPI collective component that serves MPI_Barrier
 * with libtopsync-mpi, selected by MCA parameters and no preload
 * (`--mca coll_topsync_priority 90`, the component's directory on
 * `mca_base_component_path`). Built against the Open MPI it is installed
 * for (its internal headers: Debian's libopenmpi-dev has them); a
 * component is tied to its Open MPI's version. The why: docs/design.md
 * section 8.29.
 */
#include "ompi_config.h"

#include "mpi.h"
#include "ompi/communicator/communicator.h"
#include "ompi/mca/coll/base/base.h"
#include "ompi/mca/coll/coll.h"

#include <topsync/mpi.h>

/* The module of one communicator: the barrier of the component that had it
 * before ours, for the barriers topsync itself makes on it. */
typedef struct topsync_coll_module {
    mca_coll_base_module_t super;
    mca_coll_base_module_barrier_fn_t next_barrier;
    mca_coll_base_module_t *next_module;
} topsync_coll_module_t;

static void module_construct(topsync_coll_module_t *m)
{
    m->next_barrier = NULL;
    m->next_module = NULL;
}

static void module_destruct(topsync_coll_module_t *m)
{
    if (m->next_module)
        OBJ_RELEASE(m->next_module);
}

OBJ_CLASS_INSTANCE(topsync_coll_module_t, mca_coll_base_module_t, module_construct,
                   module_destruct);

static int topsync_priority = 0; /* 0: never selected unless asked for */

/*
 * A barrier that topsync's own code makes while serving one (the MPI's
 * barrier among node leaders, a communicator not yet set up, a set-up that
 * failed: libtopsync-mpi calls PMPI_Barrier for those) comes back here; it
 * goes to the component below ours, not round again. Per thread: MPI
 * forbids concurrent collectives on one communicator, not on two.
 */
static _Thread_local int serving;

static int topsync_coll_barrier(struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    topsync_coll_module_t *m = (topsync_coll_module_t *)module;
    int initialized = 0;
    PMPI_Initialized(&initialized);
    if (serving || !initialized)
        return m->next_barrier(comm, m->next_module);
    serving = 1;
    int rc = topsync_mpi_barrier((MPI_Comm)comm);
    serving = 0;
    return rc;
}

static int topsync_module_enable(mca_coll_base_module_t *module, struct ompi_communicator_t *comm)
{
    topsync_coll_module_t *m = (topsync_coll_module_t *)module;
    /* enabled after every lower-priority module: the barrier there is theirs */
    if (!comm->c_coll->coll_barrier || !comm->c_coll->coll_barrier_module)
        return OMPI_ERROR;
    m->next_barrier = comm->c_coll->coll_barrier;
    m->next_module = comm->c_coll->coll_barrier_module;
    OBJ_RETAIN(m->next_module);
    return OMPI_SUCCESS;
}

static int topsync_init_query(bool progress_threads, bool mpi_threads)
{
    (void)progress_threads;
    (void)mpi_threads;
    return OMPI_SUCCESS;
}

static mca_coll_base_module_t *topsync_comm_query(struct ompi_communicator_t *comm, int *priority)
{
    if (topsync_priority <= 0 || OMPI_COMM_IS_INTER(comm) || ompi_comm_size(comm) < 2)
        return NULL;
    topsync_coll_module_t *m = OBJ_NEW(topsync_coll_module_t);
    if (!m)
        return NULL;
    *priority = topsync_priority;
    m->super.coll_module_enable = topsync_module_enable;
    m->super.coll_barrier = topsync_coll_barrier;
    return &m->super;
}

static int topsync_register(void);

mca_coll_base_component_2_0_0_t mca_coll_topsync_component = {
    .collm_version =
        {
            MCA_COLL_BASE_VERSION_2_0_0,
            .mca_component_name = "topsync",
            MCA_BASE_MAKE_VERSION(component, 0, 1, 0),
            .mca_register_component_params = topsync_register,
        },
    .collm_data = {MCA_BASE_METADATA_PARAM_CHECKPOINT},
    .collm_init_query = topsync_init_query,
    .collm_comm_query = topsync_comm_query,
};

static int topsync_register(void)
{
    topsync_priority = 0;
    (void)mca_base_component_var_register(
        &mca_coll_topsync_component.collm_version, "priority",
        "Priority of topsync's MPI_Barrier (0: not used; above the other components' "
        "barrier priorities, e.g. 90, to take MPI_Barrier on intra-communicators)",
        MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, OPAL_INFO_LVL_6, MCA_BASE_VAR_SCOPE_READONLY,
        &topsync_priority);
    return OMPI_SUCCESS;
}
