/*
 * The machine model and the simulator (docs/model.md): reading latency
 * tables (and refusing bad ones with a message that says where), mapping
 * them onto topologies, the levels of a pair, and the simulator's
 * guarantees: determinism for a seed, metamorphic relations of the cost
 * model (doubled latencies double every time; with all latencies equal the
 * placement cannot matter), the invariant check catching broken barriers,
 * and correct runs of every algorithm at many sizes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <topsync.h>

#include "check.h"

static const char *const algorithms[] = {"sense-reversing",
                                         "sense-reversing-counter",
                                         "sense-reversing-gr",
                                         "combining-tree",
                                         "mcs",
                                         "tournament",
                                         "dissemination",
                                         "topo",
                                         "topo/tree",
                                         "topo:numa",
                                         "topo:socket",
                                         "auto"};
#define NALG (sizeof algorithms / sizeof *algorithms)

static char tmpdir[] = "/tmp/topsync-model-XXXXXX";

static const char *write_file(const char *name, const char *text)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
    return path;
}

/* A lower-triangle CSV of n CPUs whose entry (i, j) is f(i, j). */
static const char *write_table(const char *name, unsigned n, double (*f)(unsigned, unsigned))
{
    size_t cap = (size_t)n * n * 16 + 16, len = 0;
    char *text = malloc(cap);
    text[0] = '\0';
    for (unsigned i = 0; i < n; i++) {
        for (unsigned j = 0; j < n; j++) {
            if (j)
                len += (size_t)snprintf(text + len, cap - len, ",");
            if (j < i)
                len += (size_t)snprintf(text + len, cap - len, "%.3f", f(i, j));
        }
        len += (size_t)snprintf(text + len, cap - len, "\n");
    }
    const char *path = write_file(name, text);
    free(text);
    return path;
}

static double distance_table(unsigned i, unsigned j)
{
    return 10.0 + i + j; /* distinct entries: a transposed read would show */
}

static double uniform_table(unsigned i, unsigned j)
{
    (void)i, (void)j;
    return 40.0;
}

static topsync_topology_t *synthetic(const char *description)
{
    topsync_topology_t *t = NULL;
    CHECK_EQ(topsync_topology_load_synthetic(&t, description), 0);
    return t;
}

static topsync_model_t *model_of(topsync_topology_t *t, const char *c2c, double scale)
{
    topsync_model_options_t o;
    topsync_model_options_init(&o);
    o.c2c_path = c2c;
    o.scale = scale;
    topsync_model_t *m = NULL;
    int rc = topsync_model_create(&m, t, &o);
    if (rc < 0)
        fprintf(stderr, "model: %s\n", topsync_error_message());
    CHECK_EQ(rc, 0);
    return m;
}

static int model_error(topsync_topology_t *t, const char *c2c)
{
    topsync_model_options_t o;
    topsync_model_options_init(&o);
    o.c2c_path = c2c;
    topsync_model_t *m = (topsync_model_t *)1;
    int rc = topsync_model_create(&m, t, &o);
    CHECK(m == NULL);
    return rc;
}

static void test_tables(void)
{
    topsync_topology_t *t4 = synthetic("pack:1 core:4 pu:1");
    topsync_model_t *m = model_of(t4, write_table("good.csv", 4, distance_table), 0);
    CHECK(fabs(topsync_model_latency_ns(m, 3, 1) - 14.0) < 1e-9);
    CHECK(fabs(topsync_model_latency_ns(m, 1, 3) - 14.0) < 1e-9); /* symmetric */
    CHECK(topsync_model_latency_ns(m, 2, 2) == 0);
    CHECK(topsync_model_latency_ns(m, 4, 0) < 0); /* not a PU */
    CHECK(strstr(topsync_model_describe(m), "the whole machine") != NULL);
    topsync_model_destroy(m);

    /* the tables of data/c2c end their lines with CRLF sometimes: accepted */
    m = model_of(t4, write_file("crlf.csv", ",,,\r\n5,,,\r\n6,7,,\r\n8,9,10,\r\n"), 0);
    CHECK(fabs(topsync_model_latency_ns(m, 3, 2) - 10.0) < 1e-9);
    topsync_model_destroy(m);

    CHECK_EQ(model_error(t4, write_file("empty.csv", ",,,\n,,,\n6,7,,\n8,9,10,\n")), -EINVAL);
    CHECK_MSG("line 2, column 1: empty cell");
    CHECK_EQ(model_error(t4, write_file("word.csv", ",,,\n5,,,\n6,x7,,\n8,9,10,\n")), -EINVAL);
    CHECK_MSG("line 3, column 2: 'x7' is not a latency");
    CHECK_EQ(model_error(t4, write_file("neg.csv", ",,,\n5,,,\n6,7,,\n8,-9,10,\n")), -EINVAL);
    CHECK_MSG("line 4, column 2");
    CHECK_EQ(model_error(t4, write_file("zero.csv", ",,,\n0,,,\n6,7,,\n8,9,10,\n")), -EINVAL);
    CHECK_EQ(model_error(t4, write_file("upper.csv", ",,,\n5,,3,\n6,7,,\n8,9,10,\n")), -EINVAL);
    CHECK_MSG("on or above the diagonal");
    CHECK_EQ(model_error(t4, write_file("short.csv", ",,,\n5,,,\n6\n8,9,10,\n")), -EINVAL);
    CHECK_MSG("line 3");
    CHECK_EQ(model_error(t4, write_file("one.csv", "\n")), -EINVAL);
    CHECK_MSG("at least 2");
    CHECK_EQ(model_error(t4, "/nonexistent/table.csv"), -EINVAL);
    CHECK_MSG("cannot open latency table /nonexistent/table.csv");
    /* 3 CPUs for 4 PUs in one package: neither the machine nor a package */
    CHECK_EQ(model_error(t4, write_table("three.csv", 3, distance_table)), -EINVAL);
    CHECK_MSG("has 3 CPUs, but the topology has 4 PUs");
    topsync_topology_destroy(t4);

    /* one package of two: PU k of each package is table CPU k */
    topsync_topology_t *t2p = synthetic("pack:2 core:4 pu:1");
    m = model_of(t2p, write_table("pkg.csv", 4, distance_table), 0);
    CHECK(fabs(topsync_model_latency_ns(m, 5, 7) - topsync_model_latency_ns(m, 1, 3)) < 1e-9);
    CHECK(fabs(topsync_model_latency_ns(m, 0, 4) - TOPSYNC_MODEL_CROSS_PACKAGE_NS) < 1e-9);
    CHECK(strstr(topsync_model_describe(m), "one package of 2") != NULL);
    topsync_model_destroy(m);
    topsync_model_options_t o;
    topsync_model_options_init(&o);
    o.c2c_path = write_table("pkg.csv", 4, distance_table);
    o.cross_package_ns = 300;
    o.scale = 2;
    CHECK_EQ(topsync_model_create(&m, t2p, &o), 0);
    CHECK(fabs(topsync_model_latency_ns(m, 0, 4) - 600) < 1e-9);
    CHECK(fabs(topsync_model_latency_ns(m, 1, 3) - 28) < 1e-9);
    topsync_model_destroy(m);
    o.cross_package_ns = -1;
    CHECK_EQ(topsync_model_create(&m, t2p, &o), -EINVAL);
    CHECK_MSG("cross_package_ns");
    o.cross_package_ns = 0;
    o.scale = NAN;
    CHECK_EQ(topsync_model_create(&m, t2p, &o), -EINVAL);
    CHECK_MSG("scale");
    topsync_topology_destroy(t2p);
    CHECK_EQ(topsync_model_create(&m, NULL, NULL), -EINVAL);
    CHECK_EQ(topsync_model_create(NULL, NULL, NULL), -EINVAL);
}

/* 40 ns between cores of a package, 150 across; a few pairs disturbed
 * (400, 600) or hidden siblings (4): docs/model.md, "Disturbed pairs". */
static double disturbed_table(unsigned i, unsigned j)
{
    if ((i == 5 && j == 2) || (i == 13 && j == 10))
        return 400; /* far above its package's pairs */
    if (i == 6 && j == 1)
        return 4; /* far below: kept */
    if (i == 12 && j == 3)
        return 600; /* far above the cross-package pairs */
    return i / 8 == j / 8 ? 40 : 150;
}

static void test_disturbed_pairs(void)
{
    topsync_topology_t *t = synthetic("pack:2 numa:1 core:8 pu:1");
    const char *c2c = write_table("outliers.csv", 16, disturbed_table);
    topsync_model_t *m = model_of(t, c2c, 0);
    CHECK(fabs(topsync_model_latency_ns(m, 5, 2) - 40) < 1e-9);
    CHECK(fabs(topsync_model_latency_ns(m, 2, 5) - 40) < 1e-9);
    CHECK(fabs(topsync_model_latency_ns(m, 13, 10) - 40) < 1e-9);
    CHECK(fabs(topsync_model_latency_ns(m, 6, 1) - 4) < 1e-9);
    /* each level has its own fence: 150 is no outlier across packages */
    CHECK(fabs(topsync_model_latency_ns(m, 12, 3) - 150) < 1e-9);
    CHECK(fabs(topsync_model_latency_ns(m, 8, 0) - 150) < 1e-9);
    CHECK(strstr(topsync_model_describe(m), ", 3 disturbed pairs at their level's median") != NULL);
    topsync_model_destroy(m);

    topsync_model_options_t o;
    topsync_model_options_init(&o);
    o.c2c_path = c2c;
    o.raw_table = true;
    CHECK_EQ(topsync_model_create(&m, t, &o), 0);
    CHECK(fabs(topsync_model_latency_ns(m, 5, 2) - 400) < 1e-9);
    CHECK(fabs(topsync_model_latency_ns(m, 12, 3) - 600) < 1e-9);
    CHECK(strstr(topsync_model_describe(m), "disturbed pair") == NULL);
    topsync_model_destroy(m);

    /* a table of one package of two: both packages take the median, and
     * the in-memory table follows the same rule */
    double ns[8 * 8];
    for (unsigned i = 0; i < 8; i++)
        for (unsigned j = 0; j < 8; j++)
            ns[i * 8 + j] = disturbed_table(i, j);
    topsync_model_options_init(&o);
    o.c2c_ns = ns;
    o.c2c_cpus = 8;
    CHECK_EQ(topsync_model_create(&m, t, &o), 0);
    CHECK(fabs(topsync_model_latency_ns(m, 5, 2) - 40) < 1e-9);
    CHECK(fabs(topsync_model_latency_ns(m, 13, 10) - 40) < 1e-9);
    CHECK(fabs(topsync_model_latency_ns(m, 14, 9) - 4) < 1e-9);
    CHECK(strstr(topsync_model_describe(m), ", 1 disturbed pair at its level's median") != NULL);
    topsync_model_destroy(m);
    topsync_topology_destroy(t);

    /* fewer than 4 pairs of a level: no quartiles, every pair as given */
    t = synthetic("pack:2 numa:1 core:2 pu:1");
    m = model_of(t, write_file("few.csv", ",,,\n40,,,\n150,150,,\n150,150,400,\n"), 0);
    CHECK(fabs(topsync_model_latency_ns(m, 3, 2) - 400) < 1e-9);
    topsync_model_destroy(m);
    topsync_topology_destroy(t);
}

static void test_levels(void)
{
    /* Kunpeng 920: L3 = NUMA node, so a pair in one die is a numa pair */
    topsync_topology_t *t = synthetic("pack:2 numa:2 l3:1 core:32 pu:1");
    topsync_model_t *m = model_of(t, NULL, 0);
    CHECK_EQ(topsync_model_pair_level(m, 0, 1), TOPSYNC_MODEL_NUMA);
    CHECK_EQ(topsync_model_pair_level(m, 0, 32), TOPSYNC_MODEL_PACKAGE);
    CHECK_EQ(topsync_model_pair_level(m, 0, 64), TOPSYNC_MODEL_MACHINE);
    CHECK_EQ(topsync_model_pair_level(m, 5, 5), -1);
    CHECK(fabs(topsync_model_latency_ns(m, 0, 64) -
               topsync_model_level_default_ns(TOPSYNC_MODEL_MACHINE)) < 1e-3);
    CHECK(fabs(topsync_model_latency_ns(m, 3, 4) -
               topsync_model_level_default_ns(TOPSYNC_MODEL_NUMA)) < 1e-3);
    topsync_model_destroy(m);
    topsync_topology_destroy(t);

    /* an EPYC shape: SMT, CCX (L3), one NUMA node per package */
    t = synthetic("pack:2 numa:1 l3:2 core:2 pu:2");
    topsync_model_options_t o;
    topsync_model_options_init(&o);
    o.level_ns[TOPSYNC_MODEL_L3] = 21;
    CHECK_EQ(topsync_model_create(&m, t, &o), 0);
    CHECK_EQ(topsync_model_pair_level(m, 0, 1), TOPSYNC_MODEL_CORE);
    CHECK_EQ(topsync_model_pair_level(m, 0, 2), TOPSYNC_MODEL_L3);
    CHECK_EQ(topsync_model_pair_level(m, 0, 4), TOPSYNC_MODEL_PACKAGE); /* numa == package */
    CHECK_EQ(topsync_model_pair_level(m, 0, 8), TOPSYNC_MODEL_MACHINE);
    CHECK(fabs(topsync_model_latency_ns(m, 1, 3) - 21) < 1e-9);
    CHECK(strstr(topsync_model_describe(m), "l3 21.0") != NULL);
    topsync_model_destroy(m);
    o.level_ns[TOPSYNC_MODEL_CORE] = INFINITY;
    CHECK_EQ(topsync_model_create(&m, t, &o), -EINVAL);
    CHECK_MSG("core");
    topsync_topology_destroy(t);
    CHECK_STR(topsync_model_level_name(TOPSYNC_MODEL_PACKAGE), "package");
    CHECK(topsync_model_level_name(TOPSYNC_MODEL_NLEVELS) == NULL);
    CHECK(topsync_model_level_default_ns(TOPSYNC_MODEL_NLEVELS) < 0);
}

/* ---------------------------------------------------------------------- */

struct machine {
    topsync_topology_t *topo;
    topsync_model_t *model;
    hwloc_bitmap_t *sets;
    unsigned n;
};

static void place(struct machine *mc, unsigned n, topsync_map_by_t map_by)
{
    if (mc->sets)
        for (unsigned r = 0; r < mc->n; r++)
            hwloc_bitmap_free(mc->sets[r]);
    free(mc->sets);
    mc->n = n;
    mc->sets = calloc(n, sizeof *mc->sets);
    CHECK_EQ(topsync_placement_compute(mc->topo, n, map_by, TOPSYNC_BIND_TO_CORE, mc->sets), 0);
}

static void drop(struct machine *mc)
{
    for (unsigned r = 0; mc->sets && r < mc->n; r++)
        hwloc_bitmap_free(mc->sets[r]);
    free(mc->sets);
    topsync_model_destroy(mc->model);
    topsync_topology_destroy(mc->topo);
    memset(mc, 0, sizeof *mc);
}

static int simulate(const struct machine *mc, const char *alg, const topsync_sim_options_t *o,
                    topsync_sim_result_t *r)
{
    return topsync_sim_barrier(mc->model, mc->n, (const hwloc_const_bitmap_t *)mc->sets, alg, o, r);
}

/* The slowest participant's latency at memory-level parallelism mlp (0:
 * the model's), checking that the simulation ran at the K it says. */
static double predict_at(const struct machine *mc, const char *alg, unsigned episodes,
                         uint64_t seed, unsigned mlp)
{
    topsync_sim_options_t o;
    topsync_sim_options_init(&o);
    o.episodes = episodes;
    o.seed = seed;
    o.mlp = mlp;
    topsync_sim_result_t r;
    int rc = simulate(mc, alg, &o, &r);
    if (rc < 0)
        fprintf(stderr, "%s at K %u: %s\n", alg, mlp, topsync_error_message());
    CHECK_EQ(rc, 0);
    if (rc == 0)
        CHECK_EQ(r.mlp, mlp                            ? mlp
                        : topsync_model_mlp(mc->model) ? topsync_model_mlp(mc->model)
                                                       : 1);
    return rc < 0 ? -1 : r.latency_ns;
}

static double predict(const struct machine *mc, const char *alg, unsigned episodes, uint64_t seed)
{
    return predict_at(mc, alg, episodes, seed, 0);
}

/* 60 episodes: enough for the steady state, and cheap under ASan */
static double predict_mlp(const struct machine *mc, const char *alg, unsigned mlp)
{
    return predict_at(mc, alg, 60, 5, mlp);
}

/* Memory-level parallelism (docs/model.md, "The cost model"). */
static void test_mlp(void)
{
    const char *c2c = write_table("mlp.csv", 32, uniform_table);
    struct machine mc = {synthetic("pack:1 core:32 pu:1"), NULL, NULL, 0};
    mc.model = model_of(mc.topo, c2c, 0);
    place(&mc, 32, TOPSYNC_MAP_BY_CORE);
    CHECK_EQ(topsync_model_mlp(mc.model), 0);
    for (size_t a = 0; a < NALG; a++) {
        /* K not known: simulated at 1, the model as it was before K */
        double k1 = predict_mlp(&mc, algorithms[a], 1);
        CHECK(predict_mlp(&mc, algorithms[a], 0) == k1);
        double k16 = predict_mlp(&mc, algorithms[a], 16);
        if (!strcmp(algorithms[a], "dissemination") || !strcmp(algorithms[a], "tournament") ||
            !strcmp(algorithms[a], "combining-tree") || !strcmp(algorithms[a], "sense-reversing")) {
            /* no relaxed load: every miss waits for its line at any K */
            CHECK(k16 == k1);
        } else if (!strcmp(algorithms[a], "sense-reversing-counter") ||
                   !strcmp(algorithms[a], "sense-reversing-gr") ||
                   !strncmp(algorithms[a], "topo", 4)) {
            /* a root scanning 31 words overlaps their misses */
            if (!(k16 < 0.7 * k1))
                fprintf(stderr, "%s: K 1 %.1f ns, K 16 %.1f ns\n", algorithms[a], k1, k16);
            CHECK(k16 < 0.7 * k1);
        }
        CHECK(k16 > 0 && k16 <= k1 * 1.01);
    }
    /* the old loop, one acquire wait per member: nothing to overlap */
    setenv("TOPSYNC_POLL", "ordered", 1);
    double ordered1 = predict_mlp(&mc, "sense-reversing-counter", 1);
    CHECK(predict_mlp(&mc, "sense-reversing-counter", 16) == ordered1);
    CHECK(predict_mlp(&mc, "topo", 8) == predict_mlp(&mc, "topo", 1));
    setenv("TOPSYNC_POLL", "sideways", 1);
    topsync_sim_result_t r;
    CHECK_EQ(simulate(&mc, "topo", NULL, &r), -EINVAL);
    CHECK_MSG("TOPSYNC_POLL='sideways' is not valid; valid: scan");
    unsetenv("TOPSYNC_POLL");

    /* a model that knows its K: the simulation's default, overridable */
    struct machine known = {synthetic("pack:1 core:32 pu:1"), NULL, NULL, 0};
    topsync_model_options_t o;
    topsync_model_options_init(&o);
    o.c2c_path = c2c;
    o.mlp = 4;
    CHECK_EQ(topsync_model_create(&known.model, known.topo, &o), 0);
    CHECK_EQ(topsync_model_mlp(known.model), 4);
    CHECK(strstr(topsync_model_describe(known.model), "4 outstanding misses") != NULL);
    place(&known, 32, TOPSYNC_MAP_BY_CORE);
    CHECK(predict_mlp(&known, "sense-reversing-gr", 0) ==
          predict_mlp(&mc, "sense-reversing-gr", 4));
    CHECK(predict_mlp(&known, "sense-reversing-gr", 1) ==
          predict_mlp(&mc, "sense-reversing-gr", 1));
    /* the invariant holds, and the faults are caught, at any K */
    topsync_sim_options_t so;
    topsync_sim_options_init(&so);
    so.episodes = 20;
    so.mlp = 8;
    for (size_t a = 0; a < NALG; a++) {
        so.fault = TOPSYNC_SIM_FAULT_NONE;
        CHECK_EQ(simulate(&known, algorithms[a], &so, &r), 0);
        so.fault = TOPSYNC_SIM_FAULT_SKIP_WAIT;
        so.fault_rank = 7;
        CHECK_EQ(simulate(&known, algorithms[a], &so, &r), -EPROTO);
        so.fault = TOPSYNC_SIM_FAULT_SKIP_ARRIVAL;
        int rc = simulate(&known, algorithms[a], &so, &r);
        CHECK(rc == -EDEADLK || rc == -EPROTO);
    }
    /* bad values */
    so.fault = TOPSYNC_SIM_FAULT_NONE;
    so.mlp = TOPSYNC_MODEL_MAX_MLP + 1;
    CHECK_EQ(simulate(&known, "mcs", &so, &r), -EINVAL);
    CHECK_MSG("memory-level parallelism 65; valid: 0 (the model's) or 1 to 64");
    topsync_model_t *bad = (topsync_model_t *)1;
    o.mlp = 1000;
    CHECK_EQ(topsync_model_create(&bad, known.topo, &o), -EINVAL);
    CHECK(bad == NULL);
    CHECK_MSG("memory-level parallelism 1000 is not valid; valid: 0 (not known) or 1 to 64");
    drop(&known);
    drop(&mc);
}

/* The home's service time (docs/model.md, "The cost model"): 0 is the
 * model without it, to the bit; a positive one serialises the misses that
 * reach one home, so a root scanning 16 lines of one node pays 15 of them. */
static void test_home_service(void)
{
    const char *c2c = write_table("home.csv", 32, uniform_table);
    struct machine plain = {synthetic("pack:1 numa:2 core:16 pu:1"), NULL, NULL, 0};
    plain.model = model_of(plain.topo, c2c, 0);
    place(&plain, 32, TOPSYNC_MAP_BY_CORE);
    CHECK(topsync_model_home_service_ns(plain.model) == 0);
    struct machine zero = {synthetic("pack:1 numa:2 core:16 pu:1"), NULL, NULL, 0};
    struct machine homed = {synthetic("pack:1 numa:2 core:16 pu:1"), NULL, NULL, 0};
    topsync_model_options_t o;
    topsync_model_options_init(&o);
    o.c2c_path = c2c;
    CHECK_EQ(topsync_model_create(&zero.model, zero.topo, &o), 0);
    o.home_service_ns = 5;
    CHECK_EQ(topsync_model_create(&homed.model, homed.topo, &o), 0);
    CHECK(topsync_model_home_service_ns(homed.model) == 5);
    CHECK(strstr(topsync_model_describe(homed.model), "a home serves one request per 5.00 ns"));
    place(&zero, 32, TOPSYNC_MAP_BY_CORE);
    place(&homed, 32, TOPSYNC_MAP_BY_CORE);
    for (size_t a = 0; a < NALG; a++) {
        double p = predict_mlp(&plain, algorithms[a], 16);
        CHECK(predict_mlp(&zero, algorithms[a], 16) == p);
        double h = predict_mlp(&homed, algorithms[a], 16);
        if (!(h >= p))
            fprintf(stderr, "%s: no home %.1f ns, home %.1f ns\n", algorithms[a], p, h);
        CHECK(h >= p);
    }
    double scan = predict_mlp(&plain, "sense-reversing-counter", 16);
    double served = predict_mlp(&homed, "sense-reversing-counter", 16);
    if (!(served >= scan + 15 * 5))
        fprintf(stderr, "flat counter: %.1f ns without a home, %.1f with\n", scan, served);
    CHECK(served >= scan + 15 * 5);
    /* the invariant is checked with homes too */
    topsync_sim_options_t so;
    topsync_sim_options_init(&so);
    so.episodes = 20;
    so.fault = TOPSYNC_SIM_FAULT_SKIP_WAIT;
    so.fault_rank = 3;
    topsync_sim_result_t r;
    CHECK_EQ(simulate(&homed, "topo", &so, &r), -EPROTO);
    /* bad values */
    topsync_model_t *bad = (topsync_model_t *)1;
    o.home_service_ns = -1;
    CHECK_EQ(topsync_model_create(&bad, homed.topo, &o), -EINVAL);
    CHECK(bad == NULL);
    CHECK_MSG("model: home_service_ns -1 is not valid");
    drop(&plain);
    drop(&zero);
    drop(&homed);
}

static void test_determinism_and_scale(void)
{
    struct machine one = {synthetic("pack:2 numa:2 l3:1 core:8 pu:1"), NULL, NULL, 0};
    struct machine two = {synthetic("pack:2 numa:2 l3:1 core:8 pu:1"), NULL, NULL, 0};
    const char *c2c = write_table("k32.csv", 16, distance_table); /* one package of two */
    one.model = model_of(one.topo, c2c, 0);
    two.model = model_of(two.topo, c2c, 2);
    place(&one, 32, TOPSYNC_MAP_BY_NUMA);
    place(&two, 32, TOPSYNC_MAP_BY_NUMA);
    for (size_t a = 0; a < NALG; a++) {
        double x = predict(&one, algorithms[a], 200, 7);
        double again = predict(&one, algorithms[a], 200, 7);
        double doubled = predict(&two, algorithms[a], 200, 7);
        CHECK(x > 0);
        CHECK(x == again); /* same inputs and seed: the same prediction, to the bit */
        /* every latency doubled: every time doubled (integer ps rounding) */
        if (fabs(doubled - 2 * x) > 1e-3 * x)
            fprintf(stderr, "%s: %.3f ns, doubled table %.3f ns\n", algorithms[a], x, doubled);
        CHECK(fabs(doubled - 2 * x) <= 1e-3 * x);
    }
    drop(&one);
    drop(&two);
}

static void test_uniform_table(void)
{
    /* All latencies equal: where a participant sits cannot matter. Every
     * algorithm takes the same time under every mapping, and the algorithms
     * that do not look at the topology take the same time on a machine
     * without levels. */
    const char *c2c = write_table("uniform.csv", 32, uniform_table);
    struct machine k = {synthetic("pack:2 numa:2 l3:1 core:8 pu:1"), NULL, NULL, 0};
    struct machine flat = {synthetic("pack:1 core:32 pu:1"), NULL, NULL, 0};
    k.model = model_of(k.topo, c2c, 0);
    flat.model = model_of(flat.topo, c2c, 0);
    place(&flat, 32, TOPSYNC_MAP_BY_CORE);
    for (size_t a = 0; a < NALG; a++) {
        double t[3];
        for (int map = 0; map < 3; map++) {
            place(&k, 32, (topsync_map_by_t)map);
            t[map] = predict(&k, algorithms[a], 200, 3);
        }
        if (fabs(t[1] - t[0]) > 0.01 * t[0] || fabs(t[2] - t[0]) > 0.01 * t[0])
            fprintf(stderr, "uniform %s: core %.1f numa %.1f socket %.1f\n", algorithms[a], t[0],
                    t[1], t[2]);
        CHECK(fabs(t[1] - t[0]) <= 0.01 * t[0]);
        CHECK(fabs(t[2] - t[0]) <= 0.01 * t[0]);
        if (strncmp(algorithms[a], "topo", 4) != 0 && strcmp(algorithms[a], "auto") != 0) {
            double f = predict(&flat, algorithms[a], 200, 3);
            CHECK(fabs(f - t[0]) <= 0.01 * t[0]);
        }
    }
    drop(&k);
    drop(&flat);
}

static void test_faults(void)
{
    struct machine mc = {synthetic("pack:2 numa:2 l3:1 core:4 pu:1"), NULL, NULL, 0};
    mc.model = model_of(mc.topo, NULL, 0);
    place(&mc, 16, TOPSYNC_MAP_BY_CORE);
    topsync_sim_options_t o;
    topsync_sim_options_init(&o);
    o.episodes = 50;
    topsync_sim_result_t r;
    for (size_t a = 0; a < NALG; a++) {
        for (unsigned victim = 0; victim < 16; victim += 5) {
            /* a participant that does not wait leaves before the others came */
            o.fault = TOPSYNC_SIM_FAULT_SKIP_WAIT;
            o.fault_rank = victim;
            CHECK_EQ(simulate(&mc, algorithms[a], &o, &r), -EPROTO);
            CHECK_MSG("broke the barrier invariant: participant");
            /* one whose arrival is lost leaves everybody waiting forever;
             * or, when it took itself for the last to arrive (its lost
             * fetch-add returned n - 1), it runs ahead into the next
             * episode, which the invariant catches */
            o.fault = TOPSYNC_SIM_FAULT_SKIP_ARRIVAL;
            int rc = simulate(&mc, algorithms[a], &o, &r);
            CHECK(rc == -EDEADLK || rc == -EPROTO);
            CHECK_MSG(rc == -EDEADLK ? "hangs: in episode 1" : "left episode 2");
        }
    }
    o.fault = TOPSYNC_SIM_FAULT_SKIP_WAIT;
    o.fault_rank = 16;
    CHECK_EQ(simulate(&mc, "mcs", &o, &r), -EINVAL);
    o.fault = (topsync_sim_fault_t)9;
    CHECK_EQ(simulate(&mc, "mcs", &o, &r), -EINVAL);
    CHECK_MSG("fault 9 unknown");
    drop(&mc);
}

static void test_errors(void)
{
    struct machine mc = {synthetic("pack:1 core:4 pu:1"), NULL, NULL, 0};
    mc.model = model_of(mc.topo, NULL, 0);
    place(&mc, 4, TOPSYNC_MAP_BY_CORE);
    topsync_sim_result_t r;
    hwloc_bitmap_zero(mc.sets[2]);
    CHECK_EQ(simulate(&mc, "mcs", NULL, &r), -EINVAL);
    CHECK_MSG("participant 2 is bound to no PU");
    place(&mc, 4, TOPSYNC_MAP_BY_CORE);
    CHECK_EQ(simulate(&mc, "no-such-barrier", NULL, &r), -EINVAL);
    CHECK_MSG("unknown barrier algorithm");
    CHECK_EQ(topsync_sim_barrier(NULL, 4, NULL, "mcs", NULL, &r), -EINVAL);
    CHECK_EQ(
        topsync_sim_barrier(mc.model, 0, (const hwloc_const_bitmap_t *)mc.sets, "mcs", NULL, &r),
        -EINVAL);
    topsync_sim_options_t o;
    topsync_sim_options_init(&o);
    o.episodes = 20000000;
    CHECK_EQ(simulate(&mc, "mcs", &o, &r), -EINVAL);
    CHECK_MSG("episodes");
    /* the wait policy the code runs: block publishes with an exchange */
    o.episodes = 100;
    o.wait = TOPSYNC_WAIT_BLOCK;
    CHECK_EQ(simulate(&mc, "dissemination", &o, &r), 0);
    CHECK_STR(r.wait, "block");
    CHECK_STR(r.resolved, "dissemination");
    CHECK_EQ(r.episodes, 100);
    CHECK(r.events > 0 && r.fastest_ns <= r.latency_ns);
    drop(&mc);
}

/* The invariant holds for every algorithm, size and mapping: the
 * simulator as a correctness test beyond this machine's size. */
static void test_sizes(void)
{
    static const unsigned sizes[] = {1, 2, 3, 5, 17, 64, 127};
    struct machine mc = {synthetic("pack:2 numa:2 l3:2 core:16 pu:2"), NULL, NULL, 0};
    mc.model = model_of(mc.topo, NULL, 0);
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
        for (int map = 0; map < 3; map++) {
            place(&mc, sizes[s], (topsync_map_by_t)map);
            for (size_t a = 0; a < NALG; a++)
                CHECK(predict(&mc, algorithms[a], 30, s + 1) >= 0);
        }
    drop(&mc);
    /* 1024 participants */
    struct machine big = {synthetic("pack:4 numa:2 l3:4 core:32 pu:1"), NULL, NULL, 0};
    big.model = model_of(big.topo, NULL, 0);
    place(&big, 1024, TOPSYNC_MAP_BY_NUMA);
    CHECK(predict(&big, "topo", 10, 1) > 0);
    CHECK(predict(&big, "combining-tree", 10, 1) > 0);
    drop(&big);
}

int main(void)
{
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    test_tables();
    test_disturbed_pairs();
    test_levels();
    test_determinism_and_scale();
    test_mlp();
    test_home_service();
    test_uniform_table();
    test_faults();
    test_errors();
    test_sizes();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    return check_summary();
}
