/*
 * GenMC harness: RCL requests (src/rcl/serving_loop.c and src/rcl/client.c,
 * included as they are). One servicing thread serves; CLIENTS client
 * threads (2) each run one critical section through
 * topsync_rcl_execute_checked() on the same lock, which increments a plain
 * (non-atomic) counter and returns its new value; then the main thread
 * stops the server. With idle_spin 1 the server may go to sleep on the
 * doorbell before, between or after the requests. Under every RC11
 * execution:
 *  - no data race on the counter or on the request line's plain fields
 *    (fn, arg, result): the request's release store pairs with the server's
 *    acquire load, the completion's release with the client's acquire;
 *  - the results are 1 and 2 in some order, and the counter ends at 2;
 *  - no thread waits forever (--check-liveness): a request published while
 *    the server falls asleep is seen or wakes it (the Dekker pair of the
 *    seq_cst fences in sleep_idle() and topsync_rcl_execute_checked()).
 * Weakened variants, each caught: -DWEAKEN_IN=topsync_rcl_execute_checked
 * (the client's orderings relaxed: a race on fn/arg); the same with
 * -DWEAKEN_FENCES_ONLY (the client's fence dropped: the server sleeps with
 * a request pending, forever); -DWEAKEN_IN=sleep_idle -DWEAKEN_FENCES_ONLY
 * (the server's fence dropped: the same); -DWEAKEN_IN=ts_publish (the
 * completion relaxed: a race on result).
 * CLIENTS=2 also checks the busy word between clients, but takes GenMC over
 * 5 minutes; CTest runs CLIENTS=1.
 */
#define RCL_IDLE_YIELDS 1u /* one yield pass, then sleep: the rest only repeat it */
#include "genmc_shim.h"

#include <assert.h>

/* Only the server sleeps on a futex here (the doorbell): the clients wait
 * with the spin policy, whose loop has no futex (the futex path of client
 * waits is wait.c's, checked by barrier.c), unless CLIENT_POLICY says block. */
#include "../../src/wait/wait.c"
#include "../../src/rcl/serving_loop.c"
#include "../../src/rcl/client.c"

#ifndef CLIENTS
#define CLIENTS 2
#endif

#include "rcl_harness.h"

static topsync_rcl_lock_t *lock;
static int counter; /* plain: only critical sections touch it */
static intptr_t results[CLIENTS];

static void *increment(void *arg)
{
    (void)arg;
    return (void *)(intptr_t)++counter;
}

static void *client(void *arg)
{
    intptr_t i = (intptr_t)arg;
    void *result = NULL;
    int rc = topsync_rcl_execute_checked(lock, increment, NULL, &result);
    assert(rc == 0);
    results[i] = (intptr_t)result;
    return NULL;
}

int main(void)
{
    rcl_harness_server_init(1);
    if (topsync_rcl_lock_create(&server, &lock) != 0)
        return 1;

    pthread_t srv, clients[CLIENTS];
    pthread_create(&srv, NULL, rcl_harness_servicing, NULL);
    for (intptr_t i = 0; i < CLIENTS; i++)
        pthread_create(&clients[i], NULL, client, (void *)i);
    for (int i = 0; i < CLIENTS; i++)
        pthread_join(clients[i], NULL);
    ts_rcl_signal_stop(&server);
    pthread_join(srv, NULL);
    assert(counter == CLIENTS);
    /* the results are 1..CLIENTS, each once */
    int seen = 0;
    for (int i = 0; i < CLIENTS; i++) {
        assert(results[i] >= 1 && results[i] <= CLIENTS);
        seen |= 1 << results[i];
    }
    assert(seen == ((1 << (CLIENTS + 1)) - 2));
    return 0;
}
