/*
 * The simulator on the real machines of tests/topologies/machines: for
 * every machine, a derived model (docs/model.md) and every barrier
 * algorithm at np in {2, 13, cores (up to 96)} under map-by core and numa,
 * each run checking the barrier invariant in every episode. The machines
 * with offline CPUs, twin NUMA nodes and packages inside NUMA nodes are the
 * layouts where roles, groups and the model's levels meet their odd cases.
 * Usage: sim_real_machines DIR.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include <topsync.h>

#include "../unit/check.h"

static const char *const algorithms[] = {"sense-reversing",
                                         "sense-reversing-counter",
                                         "sense-reversing-gr",
                                         "combining-tree",
                                         "mcs",
                                         "tournament",
                                         "dissemination",
                                         "topo",
                                         "topo/tree",
                                         "auto"};

static unsigned runs;

static void machine(const char *path)
{
    topsync_topology_t *t;
    topsync_model_t *m;
    if (topsync_topology_load_xml(&t, path) < 0) {
        fprintf(stderr, "%s: %s\n", path, topsync_error_message());
        CHECK(0);
        return;
    }
    CHECK_EQ(topsync_model_create(&m, t, NULL), 0);
    unsigned cores = topsync_topology_ncores(t);
    unsigned sizes[] = {2, 13, cores < 96 ? cores : 96};
    topsync_sim_options_t o;
    topsync_sim_options_init(&o);
    o.episodes = 20;
    for (size_t s = 0; s < 3; s++) {
        unsigned n = sizes[s] < cores ? sizes[s] : cores;
        for (int map = 0; map < 2; map++) {
            hwloc_bitmap_t *sets = calloc(n, sizeof *sets);
            CHECK_EQ(
                topsync_placement_compute(t, n, (topsync_map_by_t)map, TOPSYNC_BIND_TO_CORE, sets),
                0);
            for (size_t a = 0; a < sizeof algorithms / sizeof *algorithms; a++) {
                topsync_sim_result_t r;
                o.seed = runs++;
                int rc = topsync_sim_barrier(m, n, (const hwloc_const_bitmap_t *)sets,
                                             algorithms[a], &o, &r);
                if (rc < 0)
                    fprintf(stderr, "%s np %u map %d %s: %s\n", path, n, map, algorithms[a],
                            topsync_error_message());
                CHECK(rc == 0 && r.latency_ns > 0);
            }
            for (unsigned i = 0; i < n; i++)
                hwloc_bitmap_free(sets[i]);
            free(sets);
        }
    }
    topsync_model_destroy(m);
    topsync_topology_destroy(t);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: sim_real_machines DIR\n");
        return 2;
    }
    DIR *d = opendir(argv[1]);
    if (!d) {
        perror(argv[1]);
        return 2;
    }
    unsigned machines = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".xml"))
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", argv[1], e->d_name);
        machine(path);
        machines++;
    }
    closedir(d);
    printf("%u machines, %u simulations\n", machines, runs);
    CHECK(machines >= 46);
    return check_summary();
}
