/* A program built against an installed topsync: one barrier, two threads,
 * and a placement whose hwloc cpusets the caller frees (so the link line
 * must carry hwloc: pkg-config's Requires, CMake's interface). */
#include <pthread.h>
#include <stdio.h>

#include <topsync.h>

static topsync_barrier_t *barrier;
static int before[2];

static void *worker(void *arg)
{
    unsigned rank = (unsigned)(size_t)arg;
    before[rank] = 1;
    topsync_barrier_wait(barrier, rank);
    return (void *)(size_t)(before[0] + before[1]);
}

int main(void)
{
    if (topsync_barrier_create(&barrier, 2, NULL) < 0) {
        fprintf(stderr, "%s\n", topsync_error_message());
        return 1;
    }
    pthread_t t[2];
    void *seen[2];
    for (size_t r = 0; r < 2; r++)
        pthread_create(&t[r], NULL, worker, (void *)r);
    for (int r = 0; r < 2; r++)
        pthread_join(t[r], &seen[r]);
    topsync_barrier_destroy(barrier);
    int ok = seen[0] == (void *)2 && seen[1] == (void *)2;
    topsync_topology_t *topo;
    hwloc_bitmap_t sets[2];
    if (topsync_topology_load(&topo) < 0 ||
        topsync_placement_compute(topo, 2, TOPSYNC_MAP_BY_CORE, TOPSYNC_BIND_TO_CORE, sets) < 0) {
        fprintf(stderr, "%s\n", topsync_error_message());
        return 1;
    }
    ok &= !hwloc_bitmap_iszero(sets[0]);
    hwloc_bitmap_free(sets[0]);
    hwloc_bitmap_free(sets[1]);
    topsync_topology_destroy(topo);
    printf("consumer %s (%s)\n", ok ? "ok" : "FAILED", TOPSYNC_VERSION_STRING);
    return ok ? 0 : 1;
}
