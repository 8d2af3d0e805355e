/*
 * Placement and groups on the real machines of tests/topologies/machines
 * (hwloc XML of 46 machines: sub-NUMA clustering, KNL MCDRAM twins, GPU
 * memory nodes, offline and disallowed CPUs, NUMA nodes holding packages,
 * hybrid cores...).
 *
 * For every machine, np in {1, 2, 13, 14, cores/2, cores, cores+3}, every
 * map-by and every bind-to, the invariants are checked by code of this file
 * that asks hwloc directly and does not reuse the library's grouping code:
 *
 *   - no core holds two ranks while an allowed core holds none (per-core
 *     counts differ by at most one), and a new round restarts at the first
 *     unit (rank r + cores on rank r's core);
 *   - every rank is bound inside the allowed cpuset, and a wider binding
 *     contains the core the same mapping gives with bind-to core;
 *   - every group's members are bound inside one hwloc object of its
 *     level, and inside one object of every level above it (nesting);
 *   - members ascend and the leader is the lowest; a rank's groups climb
 *     the levels in order; each rank is a non-leader member of at most one
 *     group, and the ranks that are nowhere a non-leader form TOP (or are
 *     rank 0 alone);
 *   - bind-to none: no hierarchy, one TOP group of all.
 *
 * Then written-out expectations for the machines the old fixed level order
 * got wrong. Usage: test_real_machines DIR (the XML files).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <topsync.h>

#include "../unit/check.h"

static unsigned cases, violations;

static void violation(const char *machine, const char *what, ...)
{
    va_list ap;
    va_start(ap, what);
    if (violations < 40) {
        fprintf(stderr, "VIOLATION %s: ", machine);
        vfprintf(stderr, what, ap);
        fprintf(stderr, "\n");
    }
    va_end(ap);
    violations++;
}

static hwloc_obj_type_t level_type(unsigned level)
{
    switch (level) {
    case TOPSYNC_LEVEL_L2: return HWLOC_OBJ_L2CACHE;
    case TOPSYNC_LEVEL_L3: return HWLOC_OBJ_L3CACHE;
    case TOPSYNC_LEVEL_NUMA: return HWLOC_OBJ_NUMANODE;
    default: return HWLOC_OBJ_PACKAGE;
    }
}

/* `set` lies inside one object of `type`, or outside every one of them (cores
 * that no object of that type covers, like Arrow Lake's two E-cores in no L3). */
static int inside_one(hwloc_topology_t h, hwloc_obj_type_t type, hwloc_const_cpuset_t set,
                      int may_be_outside)
{
    int nb = hwloc_get_nbobjs_by_type(h, type), touched = 0;
    for (int i = 0; i < nb; i++) {
        hwloc_obj_t o = hwloc_get_obj_by_type(h, type, (unsigned)i);
        if (o->cpuset && hwloc_bitmap_isincluded(set, o->cpuset))
            return 1;
        touched |= o->cpuset && hwloc_bitmap_intersects(set, o->cpuset);
    }
    return may_be_outside && !touched;
}

/* The core (or PU) object that a bind-to-core cpuset names. */
static int core_index_of(hwloc_topology_t h, hwloc_obj_type_t core_type, hwloc_const_cpuset_t set)
{
    int nb = hwloc_get_nbobjs_by_type(h, core_type);
    for (int i = 0; i < nb; i++) {
        hwloc_obj_t o = hwloc_get_obj_by_type(h, core_type, (unsigned)i);
        if (hwloc_bitmap_isincluded(set, o->cpuset))
            return i;
    }
    return -1;
}

static void check_case(const char *name, const topsync_topology_t *t, unsigned np,
                       topsync_map_by_t map, topsync_bind_to_t bind)
{
    hwloc_topology_t h = topsync_topology_hwloc(t);
    hwloc_const_cpuset_t allowed = hwloc_topology_get_allowed_cpuset(h);
    hwloc_obj_type_t core_type =
        hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
    static const char *maps[] = {"core", "numa", "socket"},
                      *binds[] = {"core", "numa", "package", "none"};
    cases++;
    hwloc_bitmap_t *sets = calloc(np, sizeof *sets), *cores = calloc(np, sizeof *cores);
    topsync_groups_t *g = NULL;
    if (topsync_placement_compute(t, np, map, TOPSYNC_BIND_TO_CORE, cores) < 0 ||
        topsync_placement_compute(t, np, map, bind, sets) < 0 ||
        topsync_groups_build(&g, t, np, (const hwloc_const_bitmap_t *)sets, TOPSYNC_LEVELS_ALL) <
            0) {
        violation(name, "np %u map-by %s bind-to %s: %s", np, maps[map], binds[bind],
                  topsync_error_message());
        free(sets);
        free(cores);
        return;
    }
    /* balance over the allowed cores */
    unsigned ncoreobjs = (unsigned)hwloc_get_nbobjs_by_type(h, core_type) & 0xffffffu;
    unsigned *per_core = calloc((size_t)ncoreobjs, sizeof *per_core);
    for (unsigned i = 0; i < np; i++) {
        int c = core_index_of(h, core_type, cores[i]);
        if (c < 0 || hwloc_bitmap_weight(cores[i]) < 1)
            violation(name, "np %u map-by %s: rank %u is not bound to one core", np, maps[map], i);
        else
            per_core[c]++;
        if (!hwloc_bitmap_isincluded(sets[i], allowed))
            violation(name, "np %u map-by %s bind-to %s: rank %u outside the allowed cpuset", np,
                      maps[map], binds[bind], i);
        if (!hwloc_bitmap_isincluded(cores[i], sets[i]))
            violation(name, "np %u map-by %s bind-to %s: rank %u's binding misses its core", np,
                      maps[map], binds[bind], i);
    }
    /* a new round of the deal (past one rank per allowed core) starts again
     * at the first unit, as mpirun does: rank r + cores sits where rank r does */
    unsigned nallowed = topsync_topology_ncores(t);
    for (unsigned i = nallowed; i < np; i++)
        if (!hwloc_bitmap_isequal(cores[i], cores[i - nallowed]))
            violation(name,
                      "np %u map-by %s: rank %u is not on rank %u's core (a new round "
                      "must restart at the first unit)",
                      np, maps[map], i, i - nallowed);
    unsigned lo = ~0u, hi = 0;
    for (unsigned c = 0; c < ncoreobjs; c++) {
        hwloc_obj_t o = hwloc_get_obj_by_type(h, core_type, (unsigned)c);
        if (!hwloc_bitmap_intersects(o->cpuset, allowed))
            continue;
        lo = per_core[c] < lo ? per_core[c] : lo;
        hi = per_core[c] > hi ? per_core[c] : hi;
    }
    if (hi > lo + 1)
        violation(name, "np %u map-by %s: a core holds %u ranks while another holds %u", np,
                  maps[map], hi, lo);
    free(per_core);

    unsigned ngroups = topsync_groups_count(g);
    if (bind == TOPSYNC_BIND_TO_NONE && np > 1 && topsync_topology_ncores(t) > 1) {
        topsync_group_info_t info;
        if (topsync_groups_hierarchical(g) || ngroups != 1 || topsync_groups_get(g, 0, &info) < 0 ||
            info.nmembers != np)
            violation(name, "np %u bind-to none: not one flat group", np);
    }
    topsync_level_t levels[TOPSYNC_MAX_LEVELS];
    unsigned nlevels = topsync_groups_levels(g, levels);
    unsigned *nonleader = calloc(np, sizeof *nonleader);
    int top = -1;
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    for (unsigned k = 0; k < ngroups; k++) {
        topsync_group_info_t info;
        topsync_groups_get(g, k, &info);
        if (info.nmembers < 2 || info.leader != info.members[0])
            violation(name, "np %u: group %u's leader is not its lowest rank", np, k);
        hwloc_bitmap_zero(set);
        for (unsigned m = 0; m < info.nmembers; m++) {
            if (m && info.members[m] <= info.members[m - 1])
                violation(name, "np %u: group %u's members do not ascend", np, k);
            if (m)
                nonleader[info.members[m]]++;
            hwloc_bitmap_or(set, set, sets[info.members[m]]);
        }
        if (info.level == TOPSYNC_GROUP_TOP) {
            if (top >= 0)
                violation(name, "np %u: two TOP groups", np);
            top = (int)k;
            continue;
        }
        unsigned pos = 0;
        while (pos < nlevels && levels[pos] != info.level)
            pos++;
        if (pos == nlevels)
            violation(name, "np %u: group %u at a level not in the list", np, k);
        for (unsigned up = pos; up < nlevels; up++)
            if (!inside_one(h, level_type(levels[up]), set, up > pos))
                violation(name, "np %u map-by %s bind-to %s: group %u (%s) is not inside one %s",
                          np, maps[map], binds[bind], k, topsync_level_name(info.level),
                          topsync_level_name(levels[up]));
    }
    hwloc_bitmap_free(set);
    /* each rank's groups climb; non-leader at most once; TOP is what is left */
    unsigned left = 0;
    for (unsigned r = 0; r < np; r++) {
        unsigned idx[TOPSYNC_MAX_LEVELS + 1];
        int n = topsync_groups_of_rank(g, r, idx, TOPSYNC_MAX_LEVELS + 1);
        int last = -1;
        for (int k = 0; k < n; k++) {
            topsync_group_info_t info;
            topsync_groups_get(g, idx[k], &info);
            int pos = 0;
            if (info.level == TOPSYNC_GROUP_TOP)
                pos = TOPSYNC_MAX_LEVELS;
            else
                while (pos < (int)nlevels && levels[pos] != info.level)
                    pos++;
            if (pos <= last)
                violation(name, "np %u: rank %u's groups do not climb", np, r);
            last = pos;
        }
        if (nonleader[r] > 1)
            violation(name, "np %u: rank %u is a non-leader twice", np, r);
        if (nonleader[r] == 0)
            left++;
    }
    if (left != 1 || (np > 0 && nonleader[0] != 0))
        violation(name,
                  "np %u map-by %s bind-to %s: %u ranks end up leading (TOP must join "
                  "what is left)",
                  np, maps[map], binds[bind], left);
    free(nonleader);
    for (unsigned i = 0; i < np; i++) {
        hwloc_bitmap_free(sets[i]);
        hwloc_bitmap_free(cores[i]);
    }
    free(sets);
    free(cores);
    topsync_groups_destroy(g);
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static unsigned run_corpus(const char *dir)
{
    struct dirent **entries;
    int n = scandir(dir, &entries, NULL, by_name);
    unsigned machines = 0;
    for (int e = 0; e < n; e++) {
        const char *f = entries[e]->d_name;
        size_t len = strlen(f);
        if (len > 4 && !strcmp(f + len - 4, ".xml")) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", dir, f);
            topsync_topology_t *t;
            if (topsync_topology_load_xml(&t, path) < 0) {
                violation(f, "does not load: %s", topsync_error_message());
            } else {
                machines++;
                unsigned c = topsync_topology_ncores(t);
                unsigned nps[] = {1, 2, 13, 14, c / 2 ? c / 2 : 1, c, c + 3};
                for (size_t k = 0; k < sizeof nps / sizeof nps[0]; k++) {
                    int dup = 0;
                    for (size_t j = 0; j < k; j++)
                        dup |= nps[j] == nps[k];
                    if (dup)
                        continue;
                    for (int m = 0; m < 3; m++)
                        for (int b = 0; b < 4; b++)
                            check_case(f, t, nps[k], (topsync_map_by_t)m, (topsync_bind_to_t)b);
                }
                topsync_topology_destroy(t);
            }
        }
        free(entries[e]);
    }
    free(entries);
    return machines;
}

/* ---- written-out expectations ------------------------------------------ */

#define END (-1)

/* Group k is at `level` with the listed members (ranks, END-terminated). */
static void expect_group(const topsync_groups_t *g, unsigned k, const char *level, ...)
{
    topsync_group_info_t info;
    CHECK_EQ(topsync_groups_get(g, k, &info), 0);
    CHECK_STR(topsync_group_level_name(info.level), level);
    va_list ap;
    va_start(ap, level);
    unsigned m = 0;
    for (int r = va_arg(ap, int); r != END; r = va_arg(ap, int), m++)
        CHECK(m < info.nmembers && info.members[m] == (unsigned)r);
    va_end(ap);
    CHECK_EQ(info.nmembers, m);
}

static topsync_groups_t *groups_of(topsync_topology_t *t, unsigned np, topsync_map_by_t map,
                                   hwloc_bitmap_t *sets)
{
    topsync_groups_t *g = NULL;
    CHECK_EQ(topsync_placement_compute(t, np, map, TOPSYNC_BIND_TO_CORE, sets), 0);
    CHECK_EQ(
        topsync_groups_build(&g, t, np, (const hwloc_const_bitmap_t *)sets, TOPSYNC_LEVELS_ALL), 0);
    return g;
}

/* No two of the n cpusets share a PU. */
static void check_distinct(hwloc_bitmap_t *sets, unsigned n)
{
    hwloc_bitmap_t seen = hwloc_bitmap_alloc();
    for (unsigned i = 0; i < n; i++) {
        CHECK(!hwloc_bitmap_intersects(seen, sets[i]));
        hwloc_bitmap_or(seen, seen, sets[i]);
    }
    hwloc_bitmap_free(seen);
}

static void free_sets(hwloc_bitmap_t *sets, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        hwloc_bitmap_free(sets[i]);
}

static topsync_topology_t *load(const char *dir, const char *file)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    topsync_topology_t *t = NULL;
    CHECK_EQ(topsync_topology_load_xml(&t, path), 0);
    return t;
}

static void test_expectations(const char *dir)
{
    hwloc_bitmap_t sets[64];
    topsync_level_t lv[TOPSYNC_MAX_LEVELS];

    /* Intel sub-NUMA clustering (SNC4, 2 sockets): one L3 spans the package
     * and holds 4 NUMA nodes of 8 cores. 64 ranks map-by core: 8 NUMA
     * groups of 8, then Package, then TOP; L3 (== Package) is dropped. */
    topsync_topology_t *t;
    CHECK_EQ(topsync_topology_load_synthetic(&t, "pack:2 l3:1 numa:4 core:8 pu:1"), 0);
    CHECK_EQ(topsync_topology_active_levels(t, TOPSYNC_LEVELS_ALL, lv), 2);
    CHECK_STR(topsync_level_name(lv[0]), "NUMANode");
    CHECK_STR(topsync_level_name(lv[1]), "Package");
    topsync_groups_t *g = groups_of(t, 64, TOPSYNC_MAP_BY_CORE, sets);
    CHECK_EQ(topsync_groups_count(g), 11);
    for (unsigned k = 0; k < 8; k++) {
        topsync_group_info_t info;
        topsync_groups_get(g, k, &info);
        CHECK_STR(topsync_group_level_name(info.level), "NUMANode");
        CHECK(info.nmembers == 8 && info.leader == 8 * k);
    }
    expect_group(g, 8, "Package", 0, 8, 16, 24, END);
    expect_group(g, 9, "Package", 32, 40, 48, 56, END);
    expect_group(g, 10, "TOP", 0, 32, END);
    topsync_level_note_t notes[TOPSYNC_MAX_LEVELS];
    unsigned nn = topsync_groups_level_notes(g, notes);
    int l3_noted = 0;
    for (unsigned k = 0; k < nn; k++)
        l3_noted |= notes[k].level == TOPSYNC_LEVEL_L3 &&
                    strstr(notes[k].reason, "same cores as Package") != NULL;
    CHECK(l3_noted);
    topsync_groups_destroy(g);
    free_sets(sets, 64);
    topsync_topology_destroy(t);

    /* Itanium: a NUMA node holds two packages. np 8: Package {0,1} {2,3}
     * {4,5} {6,7}, then NUMA {0,2} {4,6}, then TOP {0,4}. */
    t = load(dir, "linux-8ia64-2n2s2c.xml");
    g = groups_of(t, 8, TOPSYNC_MAP_BY_CORE, sets);
    CHECK_EQ(topsync_groups_count(g), 7);
    expect_group(g, 0, "Package", 0, 1, END);
    expect_group(g, 1, "Package", 2, 3, END);
    expect_group(g, 2, "Package", 4, 5, END);
    expect_group(g, 3, "Package", 6, 7, END);
    expect_group(g, 4, "NUMANode", 0, 2, END);
    expect_group(g, 5, "NUMANode", 4, 6, END);
    expect_group(g, 6, "TOP", 0, 4, END);
    topsync_groups_destroy(g);
    free_sets(sets, 8);
    topsync_topology_destroy(t);

    /* KNL-style SNC4 with MCDRAM twins: 8 NUMA nodes, 4 core sets. 16
     * ranks map-by numa deal 4 per node (not 2 per node over 8 "nodes"),
     * each on its own core; L2 pairs, NUMA, then TOP. */
    t = load(dir, "xml214-64intel64-fakeKNL-SNC4-hybrid.xml");
    CHECK_EQ(topsync_topology_level_units(t, TOPSYNC_LEVEL_NUMA), 4);
    CHECK_EQ(hwloc_get_nbobjs_by_type(topsync_topology_hwloc(t), HWLOC_OBJ_NUMANODE), 8);
    g = groups_of(t, 16, TOPSYNC_MAP_BY_NUMA, sets);
    CHECK_EQ(topsync_groups_count(g), 13);
    expect_group(g, 0, "L2Cache", 0, 4, END);
    expect_group(g, 7, "L2Cache", 11, 15, END);
    expect_group(g, 8, "NUMANode", 0, 8, END);
    expect_group(g, 11, "NUMANode", 3, 11, END);
    expect_group(g, 12, "TOP", 0, 1, 2, 3, END);
    check_distinct(sets, 16); /* 16 distinct cores */
    topsync_groups_destroy(g);
    free_sets(sets, 16);
    topsync_topology_destroy(t);

    /* The real KNL 7210 (64 cores, MCDRAM beside DDR): 14 ranks map-by
     * numa on 14 distinct cores, not doubled on 7. */
    t = load(dir, "cpuid-Intel-KnightsLanding-XeonPhi-7210.xml");
    CHECK_EQ(topsync_placement_compute(t, 14, TOPSYNC_MAP_BY_NUMA, TOPSYNC_BIND_TO_CORE, sets), 0);
    check_distinct(sets, 14);
    free_sets(sets, 14);
    topsync_topology_destroy(t);

    /* Offline CPUs, packages of 2, 1, 1 and 2 cores: np 6 map-by socket
     * takes every core once (not core 2 twice with core 5 idle). PUs:
     * rank 0 P#0, 1 P#1, 2 P#6, 3 P#3, 4 P#4+P#12 (a core of 2), 5 P#15. */
    t = load(dir, "xml214-16em64t-4s2c2t-offlines.xml");
    CHECK_EQ(topsync_placement_compute(t, 6, TOPSYNC_MAP_BY_SOCKET, TOPSYNC_BIND_TO_CORE, sets), 0);
    static const char *const pus[] = {"0", "1", "6", "3", "4,12", "15"};
    for (unsigned i = 0; i < 6; i++) {
        char buf[64];
        hwloc_bitmap_list_snprintf(buf, sizeof buf, sets[i]);
        CHECK_STR(buf, pus[i]);
    }
    free_sets(sets, 6);
    topsync_topology_destroy(t);

    /* Intel Arrow Lake (Core Ultra 5 225U): one L3 holds 10 cores; the two
     * low-power E-cores share an L2 that lies in no L3. Cores in no L3 do
     * not make L3 cut across L2: both levels are used, and the E-core pair
     * is a group of its own up to TOP. */
    t = load(dir, "cpuid-Intel-ArrowLake-CoreUltra5-225U.xml");
    CHECK_EQ(topsync_topology_active_levels(t, TOPSYNC_LEVELS_ALL, lv), 2);
    CHECK_EQ(lv[0], TOPSYNC_LEVEL_L2);
    CHECK_EQ(lv[1], TOPSYNC_LEVEL_L3);
    g = groups_of(t, 12, TOPSYNC_MAP_BY_CORE, sets);
    CHECK_EQ(topsync_groups_levels(g, lv), 2);
    CHECK_EQ(lv[1], TOPSYNC_LEVEL_L3);
    expect_group(g, 2, "L2Cache", 10, 11, END);
    expect_group(g, 3, "L3Cache", 0, 1, 2, 6, END);
    expect_group(g, 4, "TOP", 0, 10, END);
    topsync_groups_destroy(g);
    free_sets(sets, 12);
    topsync_topology_destroy(t);

    /* Package 0's 9 cores lie in no NUMA node: 13 ranks map-by numa use 13
     * distinct cores, 7 in the node and 6 on package 0. */
    t = load(dir, "linux-offline-cpu0-node0.xml");
    CHECK_EQ(topsync_placement_compute(t, 13, TOPSYNC_MAP_BY_NUMA, TOPSYNC_BIND_TO_CORE, sets), 0);
    check_distinct(sets, 13);
    free_sets(sets, 13);
    topsync_topology_destroy(t);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_real_machines DIR\n");
        return 2;
    }
    unsigned machines = run_corpus(argv[1]);
    printf("corpus: %u machines, %u cases, %u violations\n", machines, cases, violations);
    CHECK(machines >= 46);
    CHECK_EQ(violations, 0);
    test_expectations(argv[1]);
    return check_summary();
}
