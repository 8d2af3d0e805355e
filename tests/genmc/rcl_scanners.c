/*
 * GenMC harness: two servicing threads scanning one request line at once,
 * as they may around a takeover (src/rcl/serving_loop.c and src/rcl/client.c,
 * included as they are). One client runs REQUESTS critical sections in
 * turn through topsync_rcl_execute_checked(), request r on lock r % LOCKS;
 * each increments a plain counter of its lock and a plain count of its
 * request. Both scanners call scan() until the client is done. Under every
 * RC11 execution:
 *  - no data race on the counters or on the request line's plain fields
 *    (fn, arg, result): a request never runs twice, never beside another
 *    critical section of its lock, never while its client rewrites fn/arg;
 *  - every request ran exactly once, and returned its own count;
 *  - nothing waits forever (--check-liveness).
 * Mutants, each caught (CMakeLists.txt):
 *  - -DOLD_PENDING: pending as "request != done" (the predicate before
 *    issue 22.20): a scanner that reads a stale request and a fresh done
 *    takes the initial NULL lock;
 *  - -DRELAXED_LOCK: the slot's lock stored and loaded relaxed: a scanner
 *    reads the next request's lock with the previous request's episode
 *    and runs that request again, under the other lock.
 * Bounds: 2 scanners, 1 client, REQUESTS requests (2 or 3), LOCKS locks (1
 * or 2); the scanners do not sleep (rcl_request.c checks the idle sleep).
 * With -DCLIENT_POLICY=TS_WAIT_BLOCK the client sleeps on the futex, so two
 * scanners may race to publish and wake; -DNO_WAKE must then be caught.
 */
#include "genmc_shim.h"

#include <assert.h>

#ifdef OLD_PENDING
#define TS_RCL_PENDING(req, done) ((((req) ^ (done)) & TS_EPISODE_MASK) != 0)
#endif
#ifdef RELAXED_LOCK
#define TS_RCL_LOCK_STORE_ORDER memory_order_relaxed
#define TS_RCL_LOCK_LOAD_ORDER memory_order_relaxed
#endif

/* The scanners never idle; a client under the block policy sleeps on its
 * completion word. */
#include "../../src/wait/wait.c"
#include "../../src/rcl/serving_loop.c"
#include "../../src/rcl/client.c"

#ifndef REQUESTS
#define REQUESTS 2
#endif
#ifndef LOCKS
#define LOCKS 1
#endif

#include "rcl_harness.h"

static topsync_rcl_lock_t *locks[LOCKS];
static int lock_counter[LOCKS]; /* plain: only its lock's critical sections touch it */
static int runs[REQUESTS];      /* plain: how often each request ran */
static _Atomic int client_done;

static void *critical_section(void *arg)
{
    intptr_t r = (intptr_t)arg;
    runs[r]++;
    return (void *)(intptr_t)++lock_counter[r % LOCKS];
}

static void *scanner(void *arg)
{
    uint32_t self = (uint32_t)(intptr_t)arg, cs_counter = 0;
    while (!atomic_load_explicit(&client_done, memory_order_acquire))
        scan(&server, &cs_counter, self);
    return NULL;
}

static void *client(void *arg)
{
    (void)arg;
    for (intptr_t r = 0; r < REQUESTS; r++) {
        void *result = NULL;
        int rc =
            topsync_rcl_execute_checked(locks[r % LOCKS], critical_section, (void *)r, &result);
        assert(rc == 0);
        /* request r is the (r / LOCKS + 1)-th on its lock */
        assert((intptr_t)result == r / LOCKS + 1);
    }
    atomic_store_explicit(&client_done, 1, memory_order_release);
    return NULL;
}

int main(void)
{
    rcl_harness_server_init(0);
    for (int l = 0; l < LOCKS; l++)
        if (topsync_rcl_lock_create(&server, &locks[l]) != 0)
            return 1;

    pthread_t scanners[2], c;
    pthread_create(&scanners[0], NULL, scanner, (void *)(intptr_t)1);
    pthread_create(&scanners[1], NULL, scanner, (void *)(intptr_t)2);
    pthread_create(&c, NULL, client, NULL);
    pthread_join(c, NULL);
    pthread_join(scanners[0], NULL);
    pthread_join(scanners[1], NULL);
    for (int r = 0; r < REQUESTS; r++)
        assert(runs[r] == 1);
    return 0;
}
