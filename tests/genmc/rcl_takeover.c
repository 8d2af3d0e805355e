/*
 * GenMC harness: the parking of surplus RCL servicing threads
 * (src/rcl/takeover.c, with rcl/serving_loop.c, rcl/client.c and wait.c, included
 * as they are).
 *
 * Not here: the takeover itself (a critical section that blocks, the
 *   standby's CAS on `active`, the old thread turning standby). A harness
 *   of it (servicing_main() in two threads, one client whose critical
 *   section waits for the takeover) did not finish in 10 minutes of GenMC,
 *   even with one request; rcl_scanners.c checks the two scanners that a
 *   takeover leaves running at once.
 *
 * -DSCENARIO_PARK: the Dekker pair of the standby role. The standby holds
 *   it and leaves (leave_standby(), as after a takeover) while a surplus
 *   servicing thread tries to take it (become_standby()). The surplus thread
 *   must get the role, never sleep on park_word forever. Mutants, each
 *   caught: -DTS_RCL_LEAVE_ORDER=memory_order_relaxed and
 *   -DTS_RCL_PARK_ORDER=memory_order_relaxed (either side of the pair
 *   relaxed; WEAKEN_IN on these functions makes GenMC run without end),
 *   -DNO_WAKE.
 *
 * A spawned servicing thread (ts_rcl_spawn_servicing_thread, when nobody is
 * parked) is counted, not started.
 */
#define RCL_IDLE_YIELDS 1u /* one yield pass, then sleep: the rest only repeat it */
#include "genmc_shim.h"

#include <assert.h>

#include "../../src/wait/wait.c"
#include "../../src/rcl/serving_loop.c"
#include "../../src/rcl/client.c"

/* rcl/takeover.c's calls outside the protocol: binding (no hwloc here; the
 * macro drops its arguments unevaluated), the start-up signal, and the
 * spawn of a new standby, counted instead of started */
static _Atomic int spawned;
#define hwloc_set_cpubind(topology, set, flags) 0
#define pthread_cond_broadcast(cond) ((void)(cond), 0)
#pragma push_macro("pthread_create")
#undef pthread_create
#define pthread_create(thread, attr, fn, arg)               \
    ((void)(thread), (void)(attr), (void)(fn), (void)(arg), \
     __c11_atomic_fetch_add(&spawned, 1, memory_order_relaxed), 0)
#include "../../src/rcl/takeover.c"
#pragma pop_macro("pthread_create")

#include "rcl_harness.h"

#if defined(SCENARIO_PARK)

static void *leaving(void *arg)
{
    (void)arg;
    leave_standby(&server);
    return NULL;
}

static void *surplus(void *arg)
{
    (void)arg;
    assert(become_standby(&server));
    return NULL;
}

int main(void)
{
    rcl_harness_server_init(1);
    pthread_mutex_init(&server.threads_mutex, NULL);
    atomic_init(&control.standbys, 1); /* held by the leaving thread */
    pthread_t l, s;
    pthread_create(&l, NULL, leaving, NULL);
    pthread_create(&s, NULL, surplus, NULL);
    pthread_join(l, NULL);
    pthread_join(s, NULL);
    assert(atomic_load_explicit(&control.standbys, memory_order_relaxed) == 1);
    return 0;
}

#else
#error "define SCENARIO_PARK"
#endif
