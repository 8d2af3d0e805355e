/*
 * GenMC harness: the pthread drop-in's destroy racing waits that are just
 * entering (pthread/topsync_pthread.c and src/wait/wait.c, included as they
 * are; issue 37.15).
 *
 * A barrier of count 1, so that every wait completes an episode by itself
 * and the topsync barrier under it is a stand-in: its "wait" writes a plain
 * cell of the instance's slot, which the next holder of the same slot
 * writes again (the gate must order them). Thread A waits twice, thread B
 * once, thread D destroys: tickets 0 and 2 share the slot (instance 0,
 * rank 0), so the gate hand-off runs, and destroy lands anywhere among the
 * three waits. Destroy's stand-in for free writes the state and the cells
 * as plain memory, as the allocator's next user would. Under every RC11
 * execution:
 *  - each wait returns PTHREAD_BARRIER_SERIAL_THREAD (it took a ticket
 *    before destroy claimed the word) or EINVAL (after), and A's second
 *    wait is EINVAL if its first was;
 *  - destroy returns 0, or EBUSY when a wait drew its ticket while destroy
 *    looked (then the barrier is destroyed once the waits are over); the
 *    waits it counted are over before it frees: GenMC finds no data race
 *    between the waiters' accesses to the state and the freeing writes;
 *  - nobody waits forever (--check-liveness).
 * Mutants, caught: -DWEAKEN_IN=ts_wait_reach (the gates' acquire relaxed:
 * destroy's writes race with the last holder's reads), and
 * -DSPLIT_CAS_IN=claim_for_destroy (destroy's claim as a load then a store,
 * as the old code's check then free: a ticket drawn in between is lost
 * and its waiter runs on freed state).
 */
#include "genmc_shim.h"

#include <assert.h>
#include <errno.h>

/* GenMC's pthread.h has a 4-byte barrier type and macros for the POSIX
 * barrier calls: the drop-in gets glibc's 32 bytes and its own names. */
#undef pthread_barrier_init
#undef pthread_barrier_wait
#undef pthread_barrier_destroy
typedef union {
    char size[32];
    long align;
} harness_barrier_t;
#define pthread_barrier_t harness_barrier_t
#define pthread_barrier_init harness_posix_barrier_init
#define pthread_barrier_wait harness_posix_barrier_wait
#define pthread_barrier_destroy harness_posix_barrier_destroy
#define pthread_barrierattr_getpshared(attr, out) \
    ((void)(attr), *(out) = PTHREAD_PROCESS_PRIVATE, 0)
#include <dlfcn.h>
#include <stddef.h>
int snprintf(char *out, size_t size, const char *format, ...); /* not in GenMC's stdio.h */
#define dlsym(handle, name) ((void)(handle), (void *)0)        /* no glibc behind it */

/* the free of the state: plain writes, as the allocator's next user */
static void harness_free(void *allocation);
#undef free
#define free(p) harness_free(p)

#include "../../src/wait/wait.c"
/* GenMC has no thread-local arrays; the name buffer is not run here */
#define _Thread_local
#include "../../pthread/topsync_pthread.c"
#undef _Thread_local

/* ---- the library calls the drop-in makes, as stand-ins ------------------ */

static topsync_barrier_t instances[2];
static int slot_cell[2]; /* per instance: rank 0's state, as count 1 has */

int ts_environment_check(bool barrier_mpi_valid, unsigned parts)
{
    (void)barrier_mpi_valid;
    (void)parts;
    return 0;
}

const char *topsync_error_message(void)
{
    return "";
}

int ts_env_verbose(void) /* TOPSYNC_VERBOSE unset: the drop-in stays silent */
{
    return 0;
}

int ts_barrier_make_reactive(topsync_barrier_t *b, const topsync_barrier_options_t *opts)
{
    (void)b; /* the stand-in barriers have one configuration */
    (void)opts;
    return 0;
}

void topsync_barrier_options_init(topsync_barrier_options_t *o)
{
    o->algorithm = "sense-reversing";
}

static _Atomic unsigned created;

int topsync_barrier_create(topsync_barrier_t **out, unsigned n, const topsync_barrier_options_t *o)
{
    (void)o;
    unsigned i = __c11_atomic_fetch_add(&created, 1, memory_order_relaxed);
    topsync_barrier_t *b = &instances[i];
    b->n = n;
    b->line = 64;
    /* block: the gates' futex path, straight away (no spin or yield loop) */
    b->wait.kind = TS_WAIT_BLOCK;
    b->wait.spin_iterations = 0;
    b->wait.yield_iterations = 0;
    *out = b;
    return 0;
}

const char *topsync_barrier_algorithm(const topsync_barrier_t *b)
{
    (void)b;
    return "sense-reversing";
}

const char *topsync_barrier_wait_policy_name(const topsync_barrier_t *b)
{
    (void)b;
    return "block";
}

void topsync_barrier_wait(topsync_barrier_t *b, unsigned rank)
{
    assert(rank == 0);
    slot_cell[b - instances]++; /* plain: the gate orders the slot's holders */
}

int topsync_barrier_destroy(topsync_barrier_t *b)
{
    if (b)
        slot_cell[b - instances] = -1; /* plain, after every holder */
    return 0;
}

static void harness_free(void *allocation)
{
    struct ts_pthread_barrier *s = allocation; /* the pool is line-aligned */
    s->n = 0;
    s->gates = NULL;
    s->instance[0] = s->instance[1] = NULL;
}

/* ---- the program --------------------------------------------------------- */

static harness_barrier_t barrier;

static void *waiter_a(void *arg)
{
    (void)arg;
    int first = topsync_pthread_barrier_wait(&barrier);
    int second = topsync_pthread_barrier_wait(&barrier);
    assert(first == PTHREAD_BARRIER_SERIAL_THREAD || first == EINVAL);
    assert(second == PTHREAD_BARRIER_SERIAL_THREAD || second == EINVAL);
    assert(first == PTHREAD_BARRIER_SERIAL_THREAD || second == EINVAL);
    return NULL;
}

static void *waiter_b(void *arg)
{
    (void)arg;
    int rc = topsync_pthread_barrier_wait(&barrier);
    assert(rc == PTHREAD_BARRIER_SERIAL_THREAD || rc == EINVAL);
    return NULL;
}

static void *destroyer(void *arg)
{
    (void)arg;
    int rc = topsync_pthread_barrier_destroy(&barrier);
    assert(rc == 0 || rc == EBUSY);
    if (rc == EBUSY)
        return NULL; /* in use: the program destroys it later */
    assert(topsync_pthread_barrier_destroy(&barrier) == EINVAL);
    return NULL;
}

int main(void)
{
    if (topsync_pthread_barrier_init(&barrier, NULL, 1) != 0)
        return 1;
    pthread_t a, b, d;
    pthread_create(&a, NULL, waiter_a, NULL);
    pthread_create(&b, NULL, waiter_b, NULL);
    pthread_create(&d, NULL, destroyer, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    pthread_join(d, NULL);
    return 0;
}
