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

#include "mpi_private.h"

static int keyval = MPI_KEYVAL_INVALID;
static pthread_mutex_t keyval_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * The hot path must not pay an attribute lookup per barrier: each thread
 * remembers the last communicator it synchronized on and its state. A
 * freed communicator's handle may be reused by a new one, so every state
 * deletion bumps `generation` and a cached entry is only trusted while the
 * generation it was taken at is current. release (delete) pairs with
 * acquire (lookup): a thread that sees the old generation cannot have seen
 * the deletion either, i.e. its communicator is still alive.
 */
static _Atomic unsigned long generation;
/* initial-exec: a thread-local access without a __tls_get_addr call on
 * every barrier (the library is linked or preloaded, so its TLS is static;
 * glibc keeps room for a small block in a dlopen()ed one too) */
static _Thread_local __attribute__((tls_model("initial-exec"))) struct {
    MPI_Comm comm;
    struct comm_state *state; /* NULL: nothing cached yet */
    unsigned long generation;
} cache; /* zero: Open MPI's MPI_COMM_NULL is not a constant (mpi_private.h) */

static int delete_state(MPI_Comm comm, int key, void *value, void *extra)
{
    (void)comm;
    (void)key;
    (void)extra;
    /* release: pairs with the acquire in topsync_mpi_barrier's cache check */
    atomic_fetch_add_explicit(&generation, 1, memory_order_release);
    ts_mpi_state_free(value);
    return MPI_SUCCESS;
}

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

/* Set, first thing in MPI_Finalize, by ts_mpi_states_release: no state is
 * made or looked up afterwards. Relaxed: MPI lets no other thread call it
 * once MPI_Finalize is called (the program orders their last calls before
 * it), so the readers after the store are the finalizing thread's own
 * calls, a barrier the MPI itself makes inside MPI_Finalize through Open
 * MPI's coll component (docs/design.md section 8.30). */
static atomic_bool finalizing;

static void make_keyval(void)
{
    pthread_mutex_lock(&keyval_lock);
    if (keyval == MPI_KEYVAL_INVALID && !atomic_load_explicit(&finalizing, memory_order_relaxed)) {
        PMPI_Comm_create_keyval(ts_mpi_attr_no_copy, delete_state, &keyval, NULL);
        ts_mpi_finalize_hook(); /* gives the keyval back, and what it keys */
    }
    pthread_mutex_unlock(&keyval_lock);
}

void ts_mpi_states_release(void)
{
    atomic_store_explicit(&finalizing, true, memory_order_relaxed);
    pthread_mutex_lock(&keyval_lock);
    if (keyval != MPI_KEYVAL_INVALID) {
        /* MPI_COMM_WORLD lives on past MPI_Finalize's start, and an MPI
         * need not delete its attributes: its node barrier, collectives
         * and segment go now. Asked first: deleting a missing attribute
         * is an error some MPIs raise on the communicator. */
        void *value = NULL;
        int found = 0;
        PMPI_Comm_get_attr(MPI_COMM_WORLD, keyval, &value, &found);
        if (found)
            PMPI_Comm_delete_attr(MPI_COMM_WORLD, keyval); /* delete_state() */
        /* the states of communicators the program did not free keep it
         * until the MPI deletes them (MPI_Comm_free_keyval: the key lives
         * while an attribute uses it) */
        PMPI_Comm_free_keyval(&keyval);
    }
    pthread_mutex_unlock(&keyval_lock);
    /* release: pairs with the acquire in state_for(), as in
     * delete_state(): every cached state is stale now, so the next lookup
     * takes the slow path, which tests `finalizing` */
    atomic_fetch_add_explicit(&generation, 1, memory_order_release);
}

/* comm's state, created on first use: set up now, or deferred (no
 * collective) until the communicator's TOPSYNC_MPI_SETUP_AT-th barrier. A
 * communicator that sees a barrier or two (made, used once, freed: common
 * in libraries and in thread-heavy programs) then costs no set-up at all;
 * the count is the same on every rank, MPI_Barrier being collective, and
 * so is k: MPI_COMM_WORLD's set-up agreed it (ts_mpi_agreed_setup_at).
 * MPI_COMM_WORLD is set up in MPI_Init when that is ours (world_setup),
 * else at its first barrier: there is one, and it is the one benchmarks and
 * tools time. */
static struct comm_state *state_of(MPI_Comm comm, const char *call)
{
    make_keyval();
    void *value = NULL;
    int found = 0;
    PMPI_Comm_get_attr(comm, keyval, &value, &found);
    if (found)
        return value;
    struct comm_state *s;
    /* before MPI_COMM_WORLD's set-up, this rank's own; 0 (invalid): set up
     * now, which reports it */
    int at = ts_mpi_agreed_setup_at();
    if (!at)
        at = ts_mpi_setup_at();
    if (at > 1 && comm != MPI_COMM_WORLD && (s = calloc(1, sizeof *s)) != NULL) {
        s->mode = MODE_DEFERRED;
        s->comm = comm;
        s->deferred_barriers = (unsigned)at - 1; /* PMPI_Barriers before the set-up */
    } else {
        s = ts_mpi_setup(comm, call);
    }
    PMPI_Comm_set_attr(comm, keyval, s);
    return s;
}

/* Set a deferred state up (collective over comm), in place: the attribute
 * and every thread's cached pointer stay valid. Replacing the attribute
 * instead cost 0.05-0.1 us here and, through delete_state()'s generation
 * bump, a full lookup (0.2 us) at every thread's next call on any
 * communicator. No other thread reads *deferred meanwhile: MPI forbids
 * concurrent collectives on one communicator, so a thread's next call on
 * comm is ordered after this one by whatever the program synchronized
 * them with. */
static struct comm_state *setup_deferred(MPI_Comm comm, struct comm_state *deferred,
                                         const char *call)
{
    struct comm_state *s = ts_mpi_setup(comm, call);
    *deferred = *s; /* moved: nothing points into a comm_state */
    free(s);
    return deferred;
}

/*
 * A wait with TOPSYNC_TIMEOUT that timed out: name the ranks of `comm` on
 * this node that have not arrived, and MPI_Abort (a rank that died or hangs
 * would otherwise hang the job). After the barrier between nodes
 * (after_leaders), a node leader that has not come back is waiting there
 * for a rank of another node: say so rather than blame the leader. Error
 * path only.
 */
void ts_mpi_timeout_abort(MPI_Comm comm, struct comm_state *s, topsync_barrier_t *b,
                          bool after_leaders, const char *what)
{
    char why[256];
    snprintf(why, sizeof why, "%s", topsync_error_message());
    unsigned missing[64];
    int n = topsync_barrier_missing(b, (unsigned)s->node_rank, missing, 64);
    int shown = n < 64 ? n : 64;
    char list[512] = "";
    size_t len = 0;
    for (int i = 0; i < shown && len < sizeof list - 16; i++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%d", i ? ", " : "",
                                s->node_members[missing[i]]);
    if (n > shown)
        snprintf(list + len, sizeof list - len, ", ... (%d in all)", n);
    if (after_leaders && n == 1 && missing[0] == 0)
        ts_mpi_fatal(comm,
                     "%s timed out (TOPSYNC_TIMEOUT): rank %d of the communicator, this "
                     "node's leader, has not come back from the barrier between nodes: a rank "
                     "on another node has not arrived (that node's ranks name it) [%s]",
                     what, s->node_members[0], why);
    ts_mpi_fatal(comm,
                 "%s timed out (TOPSYNC_TIMEOUT): rank(s) %s of the communicator, on "
                 "this node, have not arrived [%s]",
                 what, n > 0 ? list : "(none left: they arrived late)", why);
}

/* The intra-node barrier; with TOPSYNC_TIMEOUT set, a hang becomes an abort. */
static inline void node_wait(MPI_Comm comm, struct comm_state *s, bool after_leaders)
{
    if (__builtin_expect(topsync_barrier_wait_checked(s->node.barrier, (unsigned)s->node_rank) < 0,
                         0))
        ts_mpi_timeout_abort(comm, s, s->node.barrier, after_leaders, "MPI_Barrier");
}

/* ts_mpi_state_for, telling too whether this call set comm up (*set_up:
 * true only then, and only when topsync serves comm). */
static struct comm_state *state_for(MPI_Comm comm, const char *call, bool *set_up)
{
    struct comm_state *s;
    /* acquire: pairs with the release in delete_state() */
    unsigned long gen = atomic_load_explicit(&generation, memory_order_acquire);
    if (cache.comm == comm && cache.generation == gen && cache.state) {
        s = cache.state;
    } else {
        if (atomic_load_explicit(&finalizing, memory_order_relaxed))
            return NULL; /* MPI_Finalize has begun: the MPI's own */
        ts_mpi_bind();   /* before any handle: MPI_Init may not have been ours */
        int initialized = 0, finalized = 0;
        PMPI_Initialized(&initialized);
        PMPI_Finalized(&finalized);
        if (!initialized || finalized || comm == MPI_COMM_NULL)
            return NULL; /* let the MPI report the error */
        s = state_of(comm, call);
        cache.comm = comm;
        cache.state = s;
        cache.generation = gen;
    }
    if (s->mode == MODE_DEFERRED) {
        /* one thread at a time per communicator: MPI forbids concurrent
         * collectives on one communicator; every rank counts the same
         * calls, since they are collective */
        if (s->deferred_barriers > 0) {
            s->deferred_barriers--;
            return NULL;
        }
        s = setup_deferred(comm, s, call);
        if (set_up)
            *set_up = true;
    }
    return s->mode == MODE_NODE || s->mode == MODE_NODES ? s : NULL;
}

struct comm_state *ts_mpi_state_for(MPI_Comm comm, const char *call)
{
    return state_for(comm, call, NULL);
}

int topsync_mpi_barrier(MPI_Comm comm)
{
    bool set_up = false;
    struct comm_state *s = state_for(comm, "MPI_Barrier", &set_up);
    if (!s) {
        ts_mpi_count(TS_MPI_CALL_OWN);
        return TS_MPI_OWN(Barrier)(comm);
    }
    ts_mpi_count(TS_MPI_CALL_BARRIER);
    /* A set-up that ends served ends with an MPI_Allreduce over comm whose
     * result depends on every rank's part (comm_setup.c): nobody left it
     * before all had entered this barrier, which it therefore completes
     * (issue 35 item 4: the node barrier after it was 0.3-0.5 us of the
     * 3-4 us such a barrier cost). Every rank skips the same episode. */
    if (set_up)
        return MPI_SUCCESS;
    ts_mpi_progress_enter();
    node_wait(comm, s, false);
    if (s->mode == MODE_NODE)
        return MPI_SUCCESS;
    int rc = MPI_SUCCESS;
    if (s->node_rank == 0)
        rc = TS_MPI_OWN(Barrier)(s->leaders);
    node_wait(comm, s, true);
    return rc;
}

const char *topsync_mpi_describe(MPI_Comm comm)
{
    ts_mpi_bind();
    struct comm_state *s = state_of(comm, "topsync_mpi_describe");
    if (s->mode == MODE_DEFERRED)
        s = setup_deferred(comm, s, "topsync_mpi_describe");
    /* the barrier's own name: stable while the communicator lives */
    return s->mode == MODE_PMPI ? "mpi" : topsync_barrier_algorithm(s->node.barrier);
}

/* ---- the entry points ---------------------------------------------------- */

/* MPI_COMM_WORLD's set-up (collective), done in MPI_Init beside the MPI's
 * own start-up rather than in the program's first MPI_Barrier: loading the
 * machine's topology, auto's choice and the node's segment cost 2-10 ms at
 * np 2 here, where the MPI's first barrier costs 0.05-0.13 ms (issue 35
 * item 4). An invalid TOPSYNC_MPI_SETUP_AT is reported by the set-up. */
static void world_setup(void)
{
    (void)state_of(MPI_COMM_WORLD, "MPI_Init");
}

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
        make_keyval();
        world_setup();
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
        make_keyval();
        world_setup();
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
