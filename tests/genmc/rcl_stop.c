/*
 * GenMC harness: stopping an idle RCL server (src/rcl/serving_loop.c, included as
 * it is). One servicing thread serves with no client until it sleeps on the
 * doorbell; the main thread calls ts_rcl_signal_stop(), as
 * topsync_rcl_server_stop() does. Under every RC11 execution the server must
 * leave ts_rcl_serve(): either its recheck after the seq_cst fence of
 * sleep_idle() sees stop, or the stopper's exchange after its own fence sees
 * SLEEPING and wakes it (the Dekker pair of issue 13 item 0).
 * Weakened variant (-DWEAKEN_IN='"ts_rcl_signal_stop"'): the stopper's fence
 * dropped; GenMC must report the server asleep forever.
 */
#define RCL_IDLE_YIELDS 1u /* one yield pass, then sleep: the rest only repeat it */
#include "genmc_shim.h"

#include "../../src/rcl/serving_loop.c"

void ts_futex_wait(_Atomic uint32_t *addr, uint32_t expected, bool process_shared,
                   uint64_t timeout_ns)
{
    (void)process_shared;
    genmc_futex_wait(addr, expected, timeout_ns != 0);
}

void ts_futex_wake(_Atomic uint32_t *addr, bool process_shared)
{
    (void)process_shared;
    genmc_futex_wake(addr);
}

static struct server_lines door;
static struct server_control control;
static topsync_rcl_server_t server;

static void *servicing(void *arg)
{
    (void)arg;
    uint32_t cs_counter = 0;
    ts_rcl_serve(&server, 1, &cs_counter);
    return NULL;
}

int main(void)
{
    server.doorbell_line = &door;
    server.control = &control;
    server.idle_spin = 1;
    server.cpus = 64;
    atomic_init(&control.active, 1);
    pthread_t t;
    pthread_create(&t, NULL, servicing, NULL);
    ts_rcl_signal_stop(&server);
    pthread_join(t, NULL);
    return 0;
}
