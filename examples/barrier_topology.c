/*
 * The hierarchical barrier with its placement: threads bound as
 * topsync_placement_compute() says, on this machine (or on the synthetic
 * machine given as the first argument, whose bindings are then only used to
 * build the groups: nothing is bound).
 *
 *   cc barrier_topology.c $(pkg-config --cflags --libs topsync) -lpthread
 *   ./a.out "pack:2 numa:2 l3:1 core:32 pu:1"
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <topsync.h>

enum { EPISODES = 1000 };

struct arg {
    topsync_barrier_t *b;
    topsync_topology_t *topo;
    hwloc_bitmap_t set;
    unsigned rank;
    int bind;
};

static void *participant(void *p)
{
    struct arg *a = p;
    if (a->bind) /* bind thread r to sets[r] */
        hwloc_set_cpubind(topsync_topology_hwloc(a->topo), a->set, HWLOC_CPUBIND_THREAD);
    for (int e = 0; e < EPISODES; e++)
        topsync_barrier_wait(a->b, a->rank);
    return NULL;
}

static void check(int rc)
{
    if (rc < 0) {
        fprintf(stderr, "topsync: %s\n", topsync_error_message());
        exit(1);
    }
}

int main(int argc, char **argv)
{
    topsync_barrier_t *b;
    /* README: begin topology */
    topsync_topology_t *topo;
    if (argc > 1)
        check(topsync_topology_load_synthetic(&topo, argv[1])); /* or _load_xml */
    else
        check(topsync_topology_load(&topo)); /* this machine */
    unsigned n = topsync_topology_ncores(topo) < 8 ? topsync_topology_ncores(topo) : 8;
    hwloc_bitmap_t *sets = calloc(n, sizeof *sets); /* each thread's binding */
    check(topsync_placement_compute(topo, n, TOPSYNC_MAP_BY_CORE, TOPSYNC_BIND_TO_CORE, sets));

    topsync_barrier_options_t o;
    topsync_barrier_options_init(&o);
    o.algorithm = "topo:numa,socket/tree"; /* or "auto", "dissemination", ... */
    o.topology = topo;
    o.cpusets = (const hwloc_const_bitmap_t *)sets;
    check(topsync_barrier_create(&b, n, &o));
    /* README: end */

    pthread_t *t = calloc(n, sizeof *t);
    struct arg *args = calloc(n, sizeof *args);
    for (unsigned r = 0; r < n; r++) {
        args[r] = (struct arg){b, topo, sets[r], r, argc <= 1};
        pthread_create(&t[r], NULL, participant, &args[r]);
    }
    for (unsigned r = 0; r < n; r++)
        pthread_join(t[r], NULL);
    printf("barrier_topology: %u threads on %s: %s, %d episodes\n", n,
           topsync_topology_source(topo), topsync_barrier_algorithm(b), EPISODES);
    topsync_barrier_destroy(b);
    for (unsigned r = 0; r < n; r++)
        hwloc_bitmap_free(sets[r]);
    free(sets);
    free(t);
    free(args);
    topsync_topology_destroy(topo);
    return 0;
}
