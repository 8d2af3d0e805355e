/*
 * The time placement and groups take at scale: load an XML (by default the
 * one `lstopo --of xml -i 'pack:32 numa:4 l3:4 core:32 pu:2'` writes, 32768
 * PUs), place np ranks (default 16384), build the groups, and print the
 * seconds of each step. A measurement, not a test:
 *
 *   placement_scale FILE.xml [NP]
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <topsync.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: placement_scale FILE.xml [NP]\n");
        return 2;
    }
    unsigned np = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 16384;
    double t0 = now();
    topsync_topology_t *t;
    if (topsync_topology_load_xml(&t, argv[1]) < 0) {
        fprintf(stderr, "placement_scale: %s\n", topsync_error_message());
        return 1;
    }
    double t1 = now();
    hwloc_bitmap_t *sets = calloc(np, sizeof *sets);
    topsync_groups_t *g = NULL;
    if (!sets ||
        topsync_placement_compute(t, np, TOPSYNC_MAP_BY_CORE, TOPSYNC_BIND_TO_CORE, sets) < 0) {
        fprintf(stderr, "placement_scale: %s\n", topsync_error_message());
        return 1;
    }
    double t2 = now();
    if (topsync_groups_build(&g, t, np, (const hwloc_const_bitmap_t *)sets, TOPSYNC_LEVELS_ALL) <
        0) {
        fprintf(stderr, "placement_scale: %s\n", topsync_error_message());
        return 1;
    }
    double t3 = now();
    printf(
        "cores %u, np %u: load %.3f s, placement %.3f s, groups %.3f s (%u groups), total %.3f s\n",
        topsync_topology_ncores(t), np, t1 - t0, t2 - t1, t3 - t2, topsync_groups_count(g),
        t3 - t0);
    topsync_groups_destroy(g);
    for (unsigned i = 0; i < np; i++)
        hwloc_bitmap_free(sets[i]);
    free(sets);
    topsync_topology_destroy(t);
    return 0;
}
