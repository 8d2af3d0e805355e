/*
 * What the RCL harnesses of tests/genmc share, included after the real
 * rcl/serving_loop.c and rcl/client.c: rcl/server.c's registry reduced to the one
 * server of a harness, hwloc's one call on the client path, and that
 * server, made ready to serve as its active thread 1 (idle_spin scans
 * before the active thread sleeps). The clients wait under CLIENT_POLICY:
 * TS_WAIT_SPIN (default) or TS_WAIT_BLOCK, which goes straight to wait.c's
 * futex protocol (the server's completion then exchanges and wakes).
 */
#ifndef CLIENT_POLICY
#define CLIENT_POLICY TS_WAIT_SPIN
#endif
#ifndef TOPSYNC_TESTS_GENMC_RCL_HARNESS_H
#define TOPSYNC_TESTS_GENMC_RCL_HARNESS_H

ts_registry_t ts_rcl_servers = TS_REGISTRY_INITIALIZER;
static topsync_rcl_server_t server;
topsync_rcl_server_t *ts_rcl_server_find_locked(uint64_t uid)
{
    return uid == server.live.uid ? &server : NULL;
}
bool ts_rcl_server_is_live(const topsync_rcl_server_t *s)
{
    return s == &server;
}
int hwloc_bitmap_isset(hwloc_const_bitmap_t set, unsigned index)
{
    (void)set;
    (void)index;
    return 0;
}

static struct topsync_rcl_runtime runtime;
static struct server_lines door;
static struct server_control control;

static void rcl_harness_server_init(unsigned idle_spin)
{
    pthread_mutex_init(&runtime.mutex, NULL);
    runtime.quarantine = calloc(RCL_QUARANTINE, sizeof *runtime.quarantine);
    server.rt = &runtime;
    server.live.uid = 1;
    server.line = 64;
    server.stride = 64;
    server.max_slots = RCL_CHUNK_SLOTS;
    server.cpus = 64;
    server.idle_spin = idle_spin;
    server.doorbell_line = &door;
    server.control = &control;
    server.wait_normal.kind = CLIENT_POLICY;
    server.wait_normal.spin_iterations = 0; /* block: to the futex at once */
    server.wait_normal.yield_iterations = 0;
    pthread_mutex_init(&server.slots_mutex, NULL);
    atomic_init(&control.active, 1);
}

/* A pthread: the server's active thread 1, serving until stopped. */
static void *rcl_harness_servicing(void *arg)
{
    (void)arg;
    uint32_t cs_counter = 0;
    ts_rcl_serve(&server, 1, &cs_counter);
    return NULL;
}

#endif
