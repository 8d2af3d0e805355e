/* Groups: the test vectors of Kurnosov (2022) on Kunpeng 920 (design.md section 1),
 * the other synthetic machines, wide bindings, unbound participants, explicit
 * placement tables and bad input. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>

#include <topsync.h>

#include "check.h"

#define KUNPENG "pack:2 numa:2 l3:1 core:32 pu:1"
#define OAK "pack:2 numa:1 l3:1 core:4 pu:2"
#define JET "pack:1 l2:2 core:2 pu:1"
#define EPYC "pack:2 numa:4 l3:2 core:8 pu:2"

#define END (-1)

static topsync_groups_t *make(const char *desc, unsigned n, topsync_map_by_t map,
                              topsync_bind_to_t bind, unsigned mask)
{
    topsync_topology_t *t;
    topsync_groups_t *g = NULL;
    if (topsync_topology_load_synthetic(&t, desc) != 0)
        return NULL;
    hwloc_bitmap_t *sets = calloc(n, sizeof *sets);
    if (topsync_placement_compute(t, n, map, bind, sets) == 0) {
        CHECK_EQ(topsync_groups_build(&g, t, n, (const hwloc_const_bitmap_t *)sets, mask), 0);
        for (unsigned i = 0; i < n; i++)
            hwloc_bitmap_free(sets[i]);
    }
    free(sets);
    topsync_topology_destroy(t);
    return g;
}

/*
 * Expect group `index` to be at `level` ("NUMANode", "TOP", ...) with the
 * given members, written as a list of ranks and [lo, hi] ranges: pass
 * members as (first, last) pairs ended by END, e.g. 0, 31, END for 0..31.
 */
static void expect_group(const topsync_groups_t *g, unsigned index, const char *level, ...)
{
    topsync_group_info_t info;
    CHECK_EQ(topsync_groups_get(g, index, &info), 0);
    CHECK_STR(topsync_group_level_name(info.level), level);
    unsigned expected[512], n = 0;
    va_list ap;
    va_start(ap, level);
    for (;;) {
        int lo = va_arg(ap, int);
        if (lo == END)
            break;
        int hi = va_arg(ap, int);
        for (int r = lo; r <= hi; r++)
            expected[n++] = (unsigned)r;
    }
    va_end(ap);
    CHECK_EQ(info.nmembers, n);
    if (info.nmembers != n)
        return;
    for (unsigned i = 0; i < n; i++)
        CHECK_EQ(info.members[i], expected[i]);
    CHECK_EQ(info.leader, expected[0]);
}

static void expect_rank_in(const topsync_groups_t *g, unsigned rank, unsigned count, ...)
{
    unsigned idx[8];
    CHECK_EQ(topsync_groups_of_rank(g, rank, idx, 8), count);
    va_list ap;
    va_start(ap, count);
    for (unsigned k = 0; k < count; k++)
        CHECK_EQ(idx[k], va_arg(ap, unsigned));
    va_end(ap);
}

static void test_kunpeng_map_by_core(void)
{
    topsync_groups_t *g =
        make(KUNPENG, 128, TOPSYNC_MAP_BY_CORE, TOPSYNC_BIND_TO_CORE, TOPSYNC_LEVELS_ALL);
    CHECK(g != NULL);
    CHECK(topsync_groups_hierarchical(g));
    CHECK_EQ(topsync_groups_count(g), 7);
    expect_group(g, 0, "NUMANode", 0, 31, END);
    expect_group(g, 1, "NUMANode", 32, 63, END);
    expect_group(g, 2, "NUMANode", 64, 95, END);
    expect_group(g, 3, "NUMANode", 96, 127, END);
    expect_group(g, 4, "Package", 0, 0, 32, 32, END);
    expect_group(g, 5, "Package", 64, 64, 96, 96, END);
    expect_group(g, 6, "TOP", 0, 0, 64, 64, END);
    /* Rank 0 in G1(0..31), G2(0,32), G3(0,64); rank 1 only in G1; rank 32 in
     * G1(32..63) and G2(0,32). */
    expect_rank_in(g, 0, 3, 0u, 4u, 6u);
    expect_rank_in(g, 1, 1, 0u);
    expect_rank_in(g, 32, 2, 1u, 4u);
    expect_rank_in(g, 64, 3, 2u, 5u, 6u);
    expect_rank_in(g, 127, 1, 3u);
    topsync_groups_destroy(g);

    /* The paper's variants by level mask. */
    g = make(KUNPENG, 128, TOPSYNC_MAP_BY_CORE, TOPSYNC_BIND_TO_CORE, TOPSYNC_LEVEL_NUMA);
    CHECK_EQ(topsync_groups_count(g), 5); /* 4 NUMA groups + TOP {0,32,64,96} */
    expect_group(g, 4, "TOP", 0, 0, 32, 32, 64, 64, 96, 96, END);
    topsync_groups_destroy(g);
    g = make(KUNPENG, 128, TOPSYNC_MAP_BY_CORE, TOPSYNC_BIND_TO_CORE, TOPSYNC_LEVEL_PACKAGE);
    CHECK_EQ(topsync_groups_count(g), 3);
    expect_group(g, 0, "Package", 0, 63, END);
    expect_group(g, 1, "Package", 64, 127, END);
    expect_group(g, 2, "TOP", 0, 0, 64, 64, END);
    topsync_groups_destroy(g);
}

static void test_kunpeng_map_by_numa(void)
{
    /* 14 ranks, rank r on NUMA node r mod 4, its (r div 4)-th core. */
    topsync_groups_t *g =
        make(KUNPENG, 14, TOPSYNC_MAP_BY_NUMA, TOPSYNC_BIND_TO_CORE, TOPSYNC_LEVELS_ALL);
    CHECK_EQ(topsync_groups_count(g), 7);
    expect_group(g, 0, "NUMANode", 0, 0, 4, 4, 8, 8, 12, 12, END);
    expect_group(g, 1, "NUMANode", 1, 1, 5, 5, 9, 9, 13, 13, END);
    expect_group(g, 2, "NUMANode", 2, 2, 6, 6, 10, 10, END);
    expect_group(g, 3, "NUMANode", 3, 3, 7, 7, 11, 11, END);
    expect_group(g, 4, "Package", 0, 1, END);
    expect_group(g, 5, "Package", 2, 3, END);
    expect_group(g, 6, "TOP", 0, 0, 2, 2, END);
    topsync_groups_destroy(g);
}

static void test_kunpeng_map_by_socket(void)
{
    /* 8 ranks, rank r on package r mod 2, its (r div 2)-th core: ranks
     * 0,2,4,6 on cores 0..3 (NUMA 0), ranks 1,3,5,7 on cores 64..67 (NUMA 2).
     * Each package holds one NUMA group only, so the package level adds
     * singletons; TOP joins the two NUMA leaders. */
    topsync_groups_t *g =
        make(KUNPENG, 8, TOPSYNC_MAP_BY_SOCKET, TOPSYNC_BIND_TO_CORE, TOPSYNC_LEVELS_ALL);
    CHECK_EQ(topsync_groups_count(g), 3);
    expect_group(g, 0, "NUMANode", 0, 0, 2, 2, 4, 4, 6, 6, END);
    expect_group(g, 1, "NUMANode", 1, 1, 3, 3, 5, 5, 7, 7, END);
    expect_group(g, 2, "TOP", 0, 1, END);
    topsync_groups_destroy(g);

    /* 128 ranks map-by socket: even ranks fill package 0, odd ones package 1. */
    g = make(KUNPENG, 128, TOPSYNC_MAP_BY_SOCKET, TOPSYNC_BIND_TO_CORE, TOPSYNC_LEVELS_ALL);
    CHECK_EQ(topsync_groups_count(g), 7);
    topsync_group_info_t info;
    topsync_groups_get(g, 0, &info); /* NUMA 0: even ranks 0..62 */
    CHECK_EQ(info.nmembers, 32);
    CHECK_EQ(info.members[1], 2);
    CHECK_EQ(info.members[31], 62);
    expect_group(g, 4, "Package", 0, 0, 64, 64, END); /* NUMA leaders 0 and 64 */
    expect_group(g, 5, "Package", 1, 1, 65, 65, END);
    expect_group(g, 6, "TOP", 0, 1, END);
    topsync_groups_destroy(g);
}

static void test_wide_bindings(void)
{
    /* bind-to numa: a NUMA-wide cpuset still sits in its NUMA node. */
    topsync_groups_t *g =
        make(KUNPENG, 128, TOPSYNC_MAP_BY_CORE, TOPSYNC_BIND_TO_NUMA, TOPSYNC_LEVELS_ALL);
    CHECK_EQ(topsync_groups_count(g), 7);
    expect_group(g, 0, "NUMANode", 0, 31, END);
    expect_group(g, 6, "TOP", 0, 0, 64, 64, END);
    topsync_groups_destroy(g);

    /* bind-to package: wider than a NUMA node, so each rank is a group of its
     * own there (skipped); the package groups hold 64 ranks each. */
    g = make(KUNPENG, 128, TOPSYNC_MAP_BY_CORE, TOPSYNC_BIND_TO_PACKAGE, TOPSYNC_LEVELS_ALL);
    CHECK(topsync_groups_hierarchical(g));
    CHECK_EQ(topsync_groups_count(g), 3);
    expect_group(g, 0, "Package", 0, 63, END);
    expect_group(g, 1, "Package", 64, 127, END);
    expect_group(g, 2, "TOP", 0, 0, 64, 64, END);
    topsync_groups_destroy(g);
}

static void test_unbound(void)
{
    topsync_groups_t *g =
        make(KUNPENG, 16, TOPSYNC_MAP_BY_CORE, TOPSYNC_BIND_TO_NONE, TOPSYNC_LEVELS_ALL);
    CHECK(!topsync_groups_hierarchical(g));
    CHECK_EQ(topsync_groups_count(g), 1);
    expect_group(g, 0, "TOP", 0, 15, END);
    topsync_groups_destroy(g);

    /* No cpusets at all: the same flat fallback. */
    topsync_topology_t *t;
    topsync_topology_load_synthetic(&t, KUNPENG);
    CHECK_EQ(topsync_groups_build(&g, t, 5, NULL, TOPSYNC_LEVELS_ALL), 0);
    CHECK(!topsync_groups_hierarchical(g));
    expect_group(g, 0, "TOP", 0, 4, END);
    topsync_groups_destroy(g);
    topsync_topology_destroy(t);
}

static void test_other_machines(void)
{
    /* EPYC-like: L3 (8 cores) below NUMA (16) below package (64). */
    topsync_groups_t *g =
        make(EPYC, 32, TOPSYNC_MAP_BY_CORE, TOPSYNC_BIND_TO_CORE, TOPSYNC_LEVELS_ALL);
    CHECK_EQ(topsync_groups_count(g), 7);
    expect_group(g, 0, "L3Cache", 0, 7, END);
    expect_group(g, 3, "L3Cache", 24, 31, END);
    expect_group(g, 4, "NUMANode", 0, 0, 8, 8, END);
    expect_group(g, 5, "NUMANode", 16, 16, 24, 24, END);
    expect_group(g, 6, "Package", 0, 0, 16, 16, END);
    topsync_groups_destroy(g);

    /* Jet: pairs of cores share an L2. */
    g = make(JET, 4, TOPSYNC_MAP_BY_CORE, TOPSYNC_BIND_TO_CORE, TOPSYNC_LEVELS_ALL);
    CHECK_EQ(topsync_groups_count(g), 3);
    expect_group(g, 0, "L2Cache", 0, 1, END);
    expect_group(g, 1, "L2Cache", 2, 3, END);
    expect_group(g, 2, "TOP", 0, 0, 2, 2, END);
    topsync_groups_destroy(g);

    /* Oak: L3 == NUMA == package: package groups, then TOP. */
    g = make(OAK, 8, TOPSYNC_MAP_BY_CORE, TOPSYNC_BIND_TO_CORE, TOPSYNC_LEVELS_ALL);
    CHECK_EQ(topsync_groups_count(g), 3);
    expect_group(g, 0, "Package", 0, 3, END);
    expect_group(g, 1, "Package", 4, 7, END);
    expect_group(g, 2, "TOP", 0, 0, 4, 4, END);
    topsync_groups_destroy(g);

    /* More ranks than cores wrap around: 10 ranks on Jet's 4 cores. */
    g = make(JET, 10, TOPSYNC_MAP_BY_CORE, TOPSYNC_BIND_TO_CORE, TOPSYNC_LEVELS_ALL);
    expect_group(g, 0, "L2Cache", 0, 1, 4, 5, 8, 9, END);
    expect_group(g, 1, "L2Cache", 2, 3, 6, 7, END);
    topsync_groups_destroy(g);
}

/* Enum values out of range are refused, not used as indexes. */
static void test_placement_enums(void)
{
    topsync_topology_t *t;
    CHECK_EQ(topsync_topology_load_synthetic(&t, "pack:2 core:2 pu:1"), 0);
    hwloc_bitmap_t sets[2] = {NULL, NULL};
    CHECK_EQ(topsync_placement_compute(t, 2, (topsync_map_by_t)77, TOPSYNC_BIND_TO_CORE, sets),
             -EINVAL);
    CHECK_MSG("map_by 77 out of range");
    CHECK_EQ(topsync_placement_compute(t, 2, TOPSYNC_MAP_BY_CORE, (topsync_bind_to_t)77, sets),
             -EINVAL);
    CHECK_MSG("bind_to 77 out of range");
    topsync_topology_destroy(t);
}

static void test_table_and_bad_input(void)
{
    /* A 3-level table: pairs, then quads, then octets, 16 participants. */
    enum { N = 16 };
    topsync_level_t ids[3] = {TOPSYNC_LEVEL_L2, TOPSYNC_LEVEL_L3, TOPSYNC_LEVEL_NUMA};
    int loc[3 * N];
    for (int i = 0; i < N; i++) {
        loc[0 * N + i] = i / 2;
        loc[1 * N + i] = i / 4;
        loc[2 * N + i] = i / 8;
    }
    topsync_groups_t *g;
    CHECK_EQ(topsync_groups_build_table(&g, N, 3, ids, loc), 0);
    /* 8 pairs + 4 L3 groups of 2 leaders + 2 NUMA groups + TOP. */
    CHECK_EQ(topsync_groups_count(g), 15);
    expect_group(g, 8, "L3Cache", 0, 0, 2, 2, END);
    expect_group(g, 12, "NUMANode", 0, 0, 4, 4, END);
    expect_group(g, 14, "TOP", 0, 0, 8, 8, END);
    expect_rank_in(g, 0, 4, 0u, 8u, 12u, 14u);
    topsync_groups_destroy(g);

    /* -1: bound wider than that level's units: a group of its own there. */
    int loc2[2 * 4] = {0, 0, -1, 1, /* level 0 */ 0, 0, 0, 0};
    CHECK_EQ(topsync_groups_build_table(&g, 4, 2, ids, loc2), 0);
    CHECK_EQ(topsync_groups_count(g), 2);
    expect_group(g, 0, "L2Cache", 0, 1, END);
    expect_group(g, 1, "L3Cache", 0, 0, 2, 3, END);
    topsync_groups_destroy(g);

    /* One participant: no group at all. */
    CHECK_EQ(topsync_groups_build_flat(&g, 1), 0);
    CHECK_EQ(topsync_groups_count(g), 0);
    unsigned idx[4];
    CHECK_EQ(topsync_groups_of_rank(g, 0, idx, 4), 0);
    topsync_groups_destroy(g);

    g = (topsync_groups_t *)1;
    CHECK_EQ(topsync_groups_build_flat(&g, 0), -EINVAL);
    CHECK(g == NULL);
    CHECK_MSG("n = 0");
    CHECK_EQ(topsync_groups_build_table(&g, 4, 2, ids, NULL), -EINVAL);
    topsync_level_t bad_ids[1] = {(topsync_level_t)6};
    CHECK_EQ(topsync_groups_build_table(&g, 4, 1, bad_ids, loc2), -EINVAL);
    CHECK_EQ(topsync_groups_build_table(&g, 4, 5, ids, loc2), -EINVAL);

    topsync_topology_t *t;
    topsync_topology_load_synthetic(&t, JET);
    CHECK_EQ(topsync_groups_build(&g, t, 0, NULL, TOPSYNC_LEVELS_ALL), -EINVAL);
    CHECK_EQ(topsync_groups_build(&g, NULL, 2, NULL, TOPSYNC_LEVELS_ALL), -EINVAL);
    hwloc_bitmap_t sets[2] = {hwloc_bitmap_alloc(), hwloc_bitmap_alloc()};
    hwloc_bitmap_set(sets[0], 0);
    CHECK_EQ(topsync_groups_build(&g, t, 2, (const hwloc_const_bitmap_t *)sets, TOPSYNC_LEVELS_ALL),
             -EINVAL); /* empty cpuset */
    CHECK_MSG("participant 1 has an empty cpuset");
    hwloc_bitmap_set(sets[1], 99);
    CHECK_EQ(topsync_groups_build(&g, t, 2, (const hwloc_const_bitmap_t *)sets, TOPSYNC_LEVELS_ALL),
             -EINVAL); /* outside */
    CHECK_MSG("outside the topology");
    hwloc_bitmap_free(sets[0]);
    hwloc_bitmap_free(sets[1]);
    topsync_topology_destroy(t);

    CHECK_EQ(topsync_groups_build_flat(&g, 3), 0);
    CHECK_EQ(topsync_groups_of_rank(g, 3, idx, 4), -EINVAL);
    CHECK_MSG("rank 3 out of range");
    topsync_group_info_t info;
    CHECK_EQ(topsync_groups_get(g, 1, &info), -EINVAL);
    topsync_groups_destroy(g);
    topsync_groups_destroy(NULL);
}

/* The shared placement gives the same cpusets without a copy per rank
 * (pointers into the topology), and the core of each rank. */
static void test_placement_shared(void)
{
    static const char *const machines[] = {KUNPENG, OAK, JET, EPYC};
    for (unsigned m = 0; m < 4; m++) {
        topsync_topology_t *t;
        CHECK_EQ(topsync_topology_load_synthetic(&t, machines[m]), 0);
        unsigned ncores = topsync_topology_ncores(t), n = 2 * ncores + 3;
        for (int map = 0; map <= TOPSYNC_MAP_BY_SOCKET; map++)
            for (int bind = 0; bind <= TOPSYNC_BIND_TO_NONE; bind++) {
                hwloc_bitmap_t *own = calloc(n, sizeof *own);
                hwloc_const_bitmap_t *shared = calloc(n, sizeof *shared);
                unsigned *cores = calloc(n, sizeof *cores);
                CHECK_EQ(topsync_placement_compute(t, n, (topsync_map_by_t)map,
                                                   (topsync_bind_to_t)bind, own),
                         0);
                CHECK_EQ(topsync_placement_compute_shared(t, n, (topsync_map_by_t)map,
                                                          (topsync_bind_to_t)bind, shared, cores),
                         0);
                for (unsigned i = 0; i < n; i++) {
                    CHECK(hwloc_bitmap_isequal(own[i], shared[i]));
                    CHECK(cores[i] < ncores);
                    /* rounds repeat: rank i + ncores on rank i's core */
                    if (i >= ncores)
                        CHECK_EQ(cores[i], cores[i - ncores]);
                    hwloc_bitmap_free(own[i]);
                }
                /* equal bindings are one cpuset of the topology's */
                for (unsigned i = ncores; i < n; i++)
                    CHECK(shared[i] == shared[i - ncores]);
                free(own);
                free(shared);
                free(cores);
            }
        unsigned core;
        CHECK_EQ(topsync_placement_compute_shared(t, 1, TOPSYNC_MAP_BY_CORE, TOPSYNC_BIND_TO_CORE,
                                                  NULL, &core),
                 0);
        CHECK_EQ(core, 0);
        CHECK_EQ(topsync_placement_compute_shared(t, 1, TOPSYNC_MAP_BY_CORE, TOPSYNC_BIND_TO_CORE,
                                                  NULL, NULL),
                 -EINVAL);
        CHECK_MSG("no output");
        topsync_topology_destroy(t);
    }
}

int main(void)
{
    test_placement_enums();
    test_kunpeng_map_by_core();
    test_kunpeng_map_by_numa();
    test_kunpeng_map_by_socket();
    test_wide_bindings();
    test_unbound();
    test_other_machines();
    test_table_and_bad_input();
    test_placement_shared();
    return check_summary();
}
