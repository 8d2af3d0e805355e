/*
 * GenMC harness: destroying an RCL lock while a servicing thread may still
 * hold it (src/rcl/client.c, rcl/serving_loop.c and wait.c, included as they are).
 * One servicing thread serves (it may sleep on the doorbell).
 *
 * -DSCENARIO_AFTER: the client runs a critical section, then destroys the
 *   lock at once. The servicing thread publishes the completion before it
 *   drops the lock's busy word, so destroy may come in between; it must wait
 *   for that store. The client then writes the lock's busy word as plain
 *   memory, as the allocator's next user would: under every RC11 execution
 *   GenMC finds no data race with the servicing thread's accesses (no
 *   servicing thread touches a destroyed lock), and destroy returns 0.
 *   Mutant, caught: -DWEAKEN_IN=topsync_rcl_lock_destroy (its acquire wait
 *   for busy relaxed: a race with the release store of 0).
 *
 * -DSCENARIO_CONCURRENT: one client runs a critical section while another
 *   thread destroys the lock. destroy returns -EBUSY while the request is
 *   pending or running, or 0; the client's call returns 0 with its critical
 *   section run once, or -EINVAL (the lock was already dead). Nobody waits
 *   forever. (The lock's memory stays in the runtime's quarantine, which is
 *   what makes a request that slipped past the state check harmless; this
 *   harness does not write it.)
 *
 * Bounds: 1 servicing thread (rcl_scanners.c has two), 1 client, 1 lock,
 * 1 request.
 */
#define RCL_IDLE_YIELDS 1u /* one yield pass, then sleep: the rest only repeat it */
#include "genmc_shim.h"

#include <assert.h>

#include "../../src/wait/wait.c"
#include "../../src/rcl/serving_loop.c"
#include "../../src/rcl/client.c"

#include "rcl_harness.h"

static topsync_rcl_lock_t *lock;
static int runs; /* plain: only the critical section touches it */

static void *critical_section(void *arg)
{
    (void)arg;
    return (void *)(intptr_t)++runs;
}

#if defined(SCENARIO_AFTER)

static void *client(void *arg)
{
    (void)arg;
    void *result = NULL;
    assert(topsync_rcl_execute_checked(lock, critical_section, NULL, &result) == 0);
    assert((intptr_t)result == 1);
    assert(topsync_rcl_lock_destroy(lock) == 0);
    /* the memory's next user: a plain write, racing with any servicing
     * access to the busy word not ordered before destroy's return */
    *(uint32_t *)lock_busy(lock) = 0xdead;
    return NULL;
}

#elif defined(SCENARIO_CONCURRENT)

static int client_rc;

static void *client(void *arg)
{
    (void)arg;
    void *result = NULL;
    client_rc = topsync_rcl_execute_checked(lock, critical_section, NULL, &result);
    assert(client_rc == 0 || client_rc == -EINVAL);
    if (client_rc == 0)
        assert((intptr_t)result == 1);
    return NULL;
}

#else
#error "define SCENARIO_AFTER or SCENARIO_CONCURRENT"
#endif

int main(void)
{
    rcl_harness_server_init(1);
    if (topsync_rcl_lock_create(&server, &lock) != 0)
        return 1;
    pthread_t srv, c;
    pthread_create(&srv, NULL, rcl_harness_servicing, NULL);
    pthread_create(&c, NULL, client, NULL);
#ifdef SCENARIO_CONCURRENT
    int rc = topsync_rcl_lock_destroy(lock);
    assert(rc == 0 || rc == -EBUSY);
#endif
    pthread_join(c, NULL);
#ifdef SCENARIO_CONCURRENT
    if (rc == -EBUSY) /* the request was pending or running: now it is done */
        assert(topsync_rcl_lock_destroy(lock) == 0);
#endif
    ts_rcl_signal_stop(&server);
    pthread_join(srv, NULL);
#ifdef SCENARIO_CONCURRENT
    assert(runs == (client_rc == 0));
#else
    assert(runs == 1);
#endif
    return 0;
}
