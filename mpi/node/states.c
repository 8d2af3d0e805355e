/*
 * Each communicator's state, kept as an attribute on it and cached per
 * thread: made at its first collective call (set up then, or deferred to
 * its TOPSYNC_MPI_SETUP_AT-th barrier), freed with it, all of them given
 * up first thing in MPI_Finalize. The why: docs/design.md section 8.18.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#include <topsync.h>
#include <topsync/mpi.h>

#include "node/node.h"

static int keyval = MPI_KEYVAL_INVALID;
static pthread_mutex_t keyval_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * The hot path must not pay an attribute lookup per call: each thread
 * remembers the last communicator it synchronized on and its state
 * (ts_mpi_state_for in node.h reads it). A freed communicator's handle may
 * be reused by a new one, so every state deletion bumps the generation and
 * a cached entry is only trusted while the generation it was taken at is
 * current. release (delete) pairs with acquire (lookup): a thread that sees
 * the old generation cannot have seen the deletion either, i.e. its
 * communicator is still alive.
 */
_Atomic unsigned long ts_mpi_state_generation;
/* zero: Open MPI's MPI_COMM_NULL is not a constant (binding.h) */
_Thread_local __attribute__((tls_model("initial-exec"))) struct ts_state_cache ts_mpi_state_cache;

static int delete_state(MPI_Comm comm, int key, void *value, void *extra)
{
    (void)comm;
    (void)key;
    (void)extra;
    /* release: pairs with the acquire in ts_mpi_state_for's cache check */
    atomic_fetch_add_explicit(&ts_mpi_state_generation, 1, memory_order_release);
    ts_mpi_state_free(value);
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
        /* gives the keyval back, and what it keys, first thing */
        ts_mpi_finalize_hook(ts_mpi_states_release);
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
    /* release: pairs with the acquire in ts_mpi_state_for, as in
     * delete_state(): every cached state is stale now, so the next lookup
     * takes the slow path, which tests `finalizing` */
    atomic_fetch_add_explicit(&ts_mpi_state_generation, 1, memory_order_release);
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

/* ts_mpi_state_for's way when the cache did not answer: a state cached
 * but deferred or the MPI's own, or none cached. */
struct comm_state *ts_mpi_state_lookup(MPI_Comm comm, const char *call, bool *set_up)
{
    struct comm_state *s;
    /* acquire: pairs with the release in delete_state() */
    unsigned long gen = atomic_load_explicit(&ts_mpi_state_generation, memory_order_acquire);
    if (ts_mpi_state_cache.comm == comm && ts_mpi_state_cache.generation == gen &&
        ts_mpi_state_cache.state) {
        s = ts_mpi_state_cache.state;
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
        ts_mpi_state_cache.comm = comm;
        ts_mpi_state_cache.state = s;
        ts_mpi_state_cache.generation = gen;
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

const char *topsync_mpi_describe(MPI_Comm comm)
{
    ts_mpi_bind();
    struct comm_state *s = state_of(comm, "topsync_mpi_describe");
    if (s->mode == MODE_DEFERRED)
        s = setup_deferred(comm, s, "topsync_mpi_describe");
    /* the barrier's own name: stable while the communicator lives */
    return s->mode == MODE_PMPI ? "mpi" : topsync_barrier_algorithm(s->node.barrier);
}

/* MPI_COMM_WORLD's set-up (collective), done in MPI_Init beside the MPI's
 * own start-up rather than in the program's first MPI_Barrier: loading the
 * machine's topology, auto's choice and the node's segment cost 2-10 ms at
 * np 2 here, where the MPI's first barrier costs 0.05-0.13 ms (issue 35
 * item 4). An invalid TOPSYNC_MPI_SETUP_AT is reported by the set-up. */
void ts_mpi_world_setup(void)
{
    make_keyval();
    (void)state_of(MPI_COMM_WORLD, "MPI_Init");
}
