/* Barrier API: names, environment variables, defaults and the auto choice,
 * segment layout, the attach path with forked processes, and bad input. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <topsync.h>

#include "check.h"

static const char *const base_algorithms[] = {"sense-reversing",
                                              "sense-reversing-counter",
                                              "sense-reversing-gr",
                                              "combining-tree",
                                              "mcs",
                                              "tournament",
                                              "dissemination",
                                              "topo"};
#define NBASE (sizeof base_algorithms / sizeof base_algorithms[0])

static topsync_barrier_t *create(const char *alg, unsigned n)
{
    topsync_barrier_options_t o;
    topsync_barrier_options_init(&o);
    o.algorithm = alg;
    topsync_barrier_t *b = NULL;
    int rc = topsync_barrier_create(&b, n, &o);
    if (rc != 0)
        fprintf(stderr, "create(%s, %u): %s\n", alg, n, topsync_error_message());
    return b;
}

static void test_names(void)
{
    const char *const *names = topsync_barrier_algorithm_names();
    unsigned count = 0;
    for (; names[count]; count++)
        CHECK_EQ(topsync_barrier_algorithm_validate(names[count]), 0);
    CHECK_EQ(count, NBASE + 1); /* + auto */
    for (size_t i = 0; i < NBASE; i++) {
        topsync_barrier_t *b = create(base_algorithms[i], 3);
        CHECK(b != NULL);
        const char *got = topsync_barrier_algorithm(b);
        CHECK(strncmp(got, base_algorithms[i], strlen(base_algorithms[i])) == 0);
        topsync_barrier_destroy(b);
    }
    const char *good[] = {"topo:numa",           "topo:socket", "topo:numa,socket",
                          "topo:l3,numa,socket", "topo/tree",   "topo:l2/global",
                          "TOPO:NUMA/TREE",      "auto",        "MCS"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        CHECK_EQ(topsync_barrier_algorithm_validate(good[i]), 0);

    const char *bad[] = {"",         "centralized",      "topo:",         "topo:numa,",
                         "topo:foo", "topo/sideways",    "topo:numa/",    "topology",
                         "mcs/tree", "sense-reversing-", "topo:numa,numa"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_EQ(topsync_barrier_algorithm_validate(bad[i]), -EINVAL);
        CHECK(strlen(topsync_error_message()) > 0);
    }
    CHECK_EQ(topsync_barrier_algorithm_validate("centralized"), -EINVAL);
    CHECK_MSG("unknown barrier algorithm 'centralized'; valid: auto, sense-reversing");
    CHECK_EQ(topsync_barrier_algorithm_validate("topo/sideways"), -EINVAL);
    CHECK_MSG("valid: global, tree");
    CHECK_EQ(topsync_barrier_algorithm_validate("topo:numa,l1"), -EINVAL);
    CHECK_MSG("unknown level 'l1'");

    topsync_wait_policy_t p;
    CHECK_EQ(topsync_wait_policy_parse("yield", &p), 0);
    CHECK_EQ(p, TOPSYNC_WAIT_YIELD);
    CHECK_EQ(topsync_wait_policy_parse("sleep", &p), -EINVAL);
    CHECK_MSG("valid: spin, yield, block");
}

static void test_environment(void)
{
    topsync_barrier_t *b;
    setenv("TOPSYNC_BARRIER", "mcs", 1);
    setenv("TOPSYNC_WAIT", "yield", 1);
    CHECK_EQ(topsync_barrier_create(&b, 4, NULL), 0);
    CHECK_STR(topsync_barrier_algorithm(b), "mcs");
    CHECK_STR(topsync_barrier_wait_policy_name(b), "yield");
    topsync_barrier_destroy(b);

    /* Explicit options win over the environment. */
    topsync_barrier_options_t o;
    topsync_barrier_options_init(&o);
    o.algorithm = "tournament";
    o.wait = TOPSYNC_WAIT_SPIN;
    CHECK_EQ(topsync_barrier_create(&b, 4, &o), 0);
    CHECK_STR(topsync_barrier_algorithm(b), "tournament");
    CHECK_STR(topsync_barrier_wait_policy_name(b), "spin");
    topsync_barrier_destroy(b);

    setenv("TOPSYNC_BARRIER", "fastest", 1);
    b = (topsync_barrier_t *)1;
    CHECK_EQ(topsync_barrier_create(&b, 4, NULL), -EINVAL);
    CHECK(b == NULL);
    CHECK_MSG("TOPSYNC_BARRIER: unknown barrier algorithm 'fastest'; valid:");
    setenv("TOPSYNC_BARRIER", "topo:numa/tree", 1);
    setenv("TOPSYNC_WAIT", "nap", 1);
    CHECK_EQ(topsync_barrier_create(&b, 4, NULL), -EINVAL);
    CHECK_MSG("TOPSYNC_WAIT: unknown wait policy 'nap'; valid: spin, yield, block");
    setenv("TOPSYNC_WAIT", "block", 1);
    CHECK_EQ(topsync_barrier_create(&b, 4, NULL), 0);
    CHECK_STR(topsync_barrier_algorithm(b), "topo:unbound/tree");
    topsync_barrier_destroy(b);
    unsetenv("TOPSYNC_BARRIER");
    unsetenv("TOPSYNC_WAIT");

    const char *bad_spin[] = {"-1", "lots", "12x", "100000001", " 10", "10 ", "\t10"};
    for (size_t i = 0; i < sizeof bad_spin / sizeof bad_spin[0]; i++) {
        setenv("TOPSYNC_SPIN", bad_spin[i], 1);
        CHECK_EQ(topsync_barrier_create(&b, 2, NULL), -EINVAL);
        CHECK_MSG("TOPSYNC_SPIN=");
        CHECK_MSG("valid: a whole number");
    }
    /* topsync_environment_check reports what create would, without creating. */
    setenv("TOPSYNC_SPIN", "-1", 1);
    CHECK_EQ(topsync_environment_check(), -EINVAL);
    CHECK_MSG("TOPSYNC_SPIN='-1' is not valid");
    unsetenv("TOPSYNC_SPIN");
    CHECK_EQ(topsync_environment_check(), 0);
    setenv("TOPSYNC_BARRIER", "fastest", 1);
    CHECK_EQ(topsync_environment_check(), -EINVAL);
    CHECK_MSG("TOPSYNC_BARRIER: unknown barrier algorithm 'fastest'; valid:");
    setenv("TOPSYNC_BARRIER", "topo:numa/tree", 1);
    setenv("TOPSYNC_WAIT", "nap", 1);
    CHECK_EQ(topsync_environment_check(), -EINVAL);
    CHECK_MSG("TOPSYNC_WAIT: unknown wait policy 'nap'; valid: spin, yield, block");
    setenv("TOPSYNC_WAIT", "yield", 1);
    CHECK_EQ(topsync_environment_check(), 0);
    unsetenv("TOPSYNC_BARRIER");
    unsetenv("TOPSYNC_WAIT");

    /* one rule for every variable (issue 13 item 13): empty is unset,
     * surrounding spaces are invalid; TOPSYNC_RCL_PLACEMENT is checked too */
    const char *every[] = {"TOPSYNC_BARRIER", "TOPSYNC_WAIT", "TOPSYNC_SPIN", "TOPSYNC_TIMEOUT",
                           "TOPSYNC_RCL_PLACEMENT"};
    const char *good[] = {"mcs", "spin", "10", "1.5", "spread"};
    for (size_t i = 0; i < sizeof every / sizeof every[0]; i++) {
        setenv(every[i], "", 1);
        CHECK_EQ(topsync_environment_check(), 0);
        if (i < 4) {
            CHECK_EQ(topsync_barrier_create(&b, 2, NULL), 0);
            topsync_barrier_destroy(b);
        }
        setenv(every[i], good[i], 1);
        CHECK_EQ(topsync_environment_check(), 0);
        char padded[32];
        snprintf(padded, sizeof padded, " %s", good[i]);
        setenv(every[i], padded, 1);
        CHECK_EQ(topsync_environment_check(), -EINVAL);
        CHECK_MSG(every[i]);
        snprintf(padded, sizeof padded, "%s ", good[i]);
        setenv(every[i], padded, 1);
        CHECK_EQ(topsync_environment_check(), -EINVAL);
        unsetenv(every[i]);
    }
    /* the same words and numbers everywhere (issue 37 item 12): words in
     * any case; numbers in decimal digits only, seconds with a fraction */
    struct {
        const char *name, *value;
        int rc;
    } parsed[] = {
        {"TOPSYNC_WAIT", "SPIN", 0},          {"TOPSYNC_POLL", "SCAN", 0},
        {"TOPSYNC_POLL", "Ordered", 0},       {"TOPSYNC_POLL", "sorted", -EINVAL},
        {"TOPSYNC_RCL_PLACEMENT", "Pack", 0}, {"TOPSYNC_BARRIER", "MCS", 0},
        {"TOPSYNC_TIMEOUT", "0x10", -EINVAL}, {"TOPSYNC_TIMEOUT", "1e3", -EINVAL},
        {"TOPSYNC_TIMEOUT", "inf", -EINVAL},  {"TOPSYNC_TIMEOUT", "nan", -EINVAL},
        {"TOPSYNC_TIMEOUT", "-0", -EINVAL},   {"TOPSYNC_TIMEOUT", ".", -EINVAL},
        {"TOPSYNC_TIMEOUT", "0.25", 0},       {"TOPSYNC_TIMEOUT", ".5", 0},
        {"TOPSYNC_TIMEOUT", "1000000", 0},    {"TOPSYNC_TIMEOUT", "1000000.5", -EINVAL},
        {"TOPSYNC_SPIN", "1e3", -EINVAL},     {"TOPSYNC_SPIN", "0x10", -EINVAL},
        {"TOPSYNC_SPIN", "+5", -EINVAL},      {"TOPSYNC_SPIN", "1000", 0},
        {"TOPSYNC_SPIN", "0010", 0},          {"TOPSYNC_SPIN", "99999999999999999999", -EINVAL},
    };
    for (size_t i = 0; i < sizeof parsed / sizeof parsed[0]; i++) {
        setenv(parsed[i].name, parsed[i].value, 1);
        int rc = topsync_environment_check();
        if (rc != parsed[i].rc)
            fprintf(stderr, "%s='%s': %d (%s)\n", parsed[i].name, parsed[i].value, rc,
                    topsync_error_message());
        CHECK_EQ(rc, parsed[i].rc);
        if (rc < 0)
            CHECK_MSG(parsed[i].name);
        if (rc < 0 && strcmp(parsed[i].name, "TOPSYNC_POLL"))
            CHECK_MSG("in decimal digits");
        unsetenv(parsed[i].name);
    }
    setenv("TOPSYNC_TIMEOUT", "1e3", 1);
    CHECK_EQ(topsync_barrier_create(&b, 2, NULL), -EINVAL);
    CHECK_MSG("TOPSYNC_TIMEOUT='1e3' is not valid; valid: a number of seconds from 0 to 1000000, "
              "in decimal digits with an optional fraction, e.g. 30 or 0.5");
    unsetenv("TOPSYNC_TIMEOUT");

    setenv("TOPSYNC_RCL_PLACEMENT", "nearest", 1);
    CHECK_EQ(topsync_environment_check(), -EINVAL);
    CHECK_MSG("TOPSYNC_RCL_PLACEMENT: unknown RCL placement policy 'nearest'; valid: pack, "
              "spread, default");
    unsetenv("TOPSYNC_RCL_PLACEMENT");

    setenv("TOPSYNC_SPIN", "0", 1);
    CHECK_EQ(topsync_barrier_create(&b, 2, NULL), 0);
    topsync_barrier_destroy(b);
    unsetenv("TOPSYNC_SPIN");

    /* Defaults: block, and auto resolves to a real algorithm. */
    CHECK_EQ(topsync_barrier_create(&b, 2, NULL), 0);
    CHECK_STR(topsync_barrier_wait_policy_name(b), "block");
    CHECK(strcmp(topsync_barrier_algorithm(b), "auto") != 0);
    topsync_barrier_destroy(b);
}

/* auto for n participants bound one per core of t (map-by core): sets
 * receives their cpusets. */
static void bound_auto_options(topsync_barrier_options_t *o, topsync_topology_t *t, unsigned n,
                               hwloc_bitmap_t *sets)
{
    CHECK_EQ(topsync_placement_compute(t, n, TOPSYNC_MAP_BY_CORE, TOPSYNC_BIND_TO_CORE, sets), 0);
    topsync_barrier_options_init(o);
    o->algorithm = "auto";
    o->topology = t;
    o->cpusets = (const hwloc_const_bitmap_t *)sets;
}

static void test_auto_choice(void)
{
    /* The rules, alone (the tuning and model steps are tested below and in
     * test_tuning). */
    setenv("TOPSYNC_AUTO", "rules", 1);
    /* Many more participants than this machine's CPUs: the central counter. */
    topsync_barrier_t *b = create("auto", 512);
    CHECK(strstr(topsync_barrier_explain(b), "auto: rules: sense-reversing, since more "
                                             "participants are runnable") != NULL);
    CHECK_STR(topsync_barrier_algorithm(b), "sense-reversing");
    topsync_barrier_destroy(b);

    /* A known hierarchy with groups below TOP (Jet's shared L2, 2 ranks on
     * one L2, not oversubscribed on any machine with 2 CPUs): topo. */
    topsync_topology_t *t;
    topsync_topology_load_synthetic(&t, "pack:1 l2:2 core:2 pu:1");
    hwloc_bitmap_t sets[2];
    topsync_barrier_options_t o;
    bound_auto_options(&o, t, 2, sets);
    CHECK_EQ(topsync_barrier_create(&b, 2, &o), 0);
    CHECK_STR(topsync_barrier_algorithm(b), "topo:l2/global");
    CHECK_STR(topsync_barrier_explain(b),
              "auto: rules: topo, since the participants' hierarchy has groups below TOP "
              "[TOPSYNC_AUTO=rules]; reactive (TOPSYNC_REACTIVE=on): switches to "
              "sense-reversing/block when that is faster; tries dissemination/block online "
              "(what the rules set aside)");
    const topsync_groups_t *g = topsync_barrier_groups(b);
    CHECK(g != NULL && topsync_groups_count(g) == 1);
    topsync_barrier_destroy(b);

    /* The model step: bound, one per core, not oversubscribed. Its
     * prediction is the fastest of the simulator's own predictions of the
     * candidates on this topology's default latencies; it overrules the
     * rules' topo only by more than the model's measured error on such a
     * ratio (src/select/model_error.h), which 2 participants never give. */
    setenv("TOPSYNC_AUTO", "model,rules", 1);
    CHECK_EQ(topsync_barrier_create(&b, 2, &o), 0);
    const char *why = topsync_barrier_explain(b);
    const char *prefix = "auto: model (per-level default latencies): predicted ";
    CHECK(strncmp(why, prefix, strlen(prefix)) == 0);
    char first[96] = "";
    sscanf(why + strlen(prefix), "%95s", first);
    CHECK_STR(topsync_barrier_algorithm(b), "topo:l2/global");
    CHECK(strncmp(first, "topo", 4) == 0 ||
          (strstr(why, " fastest at K = ") != NULL &&
           strstr(why, "within the model's error on the ratio of two barriers") != NULL &&
           strstr(why, "rules: topo, since the participants' hierarchy has groups below TOP")));
    topsync_model_t *model;
    CHECK_EQ(topsync_model_create(&model, t, NULL), 0);
    topsync_sim_options_t so;
    topsync_sim_options_init(&so);
    so.episodes = 40;
    so.warmup = 4;
    so.seed = 1;
    so.wait = TOPSYNC_WAIT_BLOCK;
    double fastest = 1e30;
    const char *names[] = {"sense-reversing", "combining-tree", "mcs",         "tournament",
                           "dissemination",   "topo:l2/global", "topo:l2/tree"};
    topsync_sim_result_t r;
    for (size_t k = 0; k < sizeof names / sizeof *names; k++)
        if (topsync_sim_barrier(model, 2, o.cpusets, names[k], &so, &r) == 0 &&
            r.latency_ns < fastest)
            fastest = r.latency_ns;
    CHECK_EQ(topsync_sim_barrier(model, 2, o.cpusets, first, &so, &r), 0);
    CHECK(r.latency_ns <= fastest);
    topsync_model_destroy(model);
    topsync_barrier_destroy(b);
    /* oversubscribed: the model has no scheduler, the rules decide */
    o.cpu_sharers = 8;
    CHECK_EQ(topsync_barrier_create(&b, 2, &o), 0);
    CHECK_STR(topsync_barrier_algorithm(b), "sense-reversing");
    CHECK(strstr(topsync_barrier_explain(b), "auto: rules:") != NULL);
    topsync_barrier_destroy(b);
    o.cpu_sharers = 0;
    /* The model's choice must hold at every memory-level parallelism K the
     * cores may have (K = 1..16, not known here): 2 participants have
     * nothing to overlap, so the prediction holds at every K, and the
     * explanation gives it at the K of the smallest margin */
    CHECK_EQ(topsync_barrier_create(&b, 2, &o), 0);
    CHECK(strstr(topsync_barrier_explain(b), "faster than the rules' topo") != NULL);
    CHECK(strstr(topsync_barrier_explain(b), "memory-level parallelism not known") == NULL);
    topsync_barrier_destroy(b);
    /* 64 processes on the paper's server: at K = 1 no candidate is
     * predicted faster than the rules' topo by more than the model's error
     * on such a ratio, so the other Ks are not simulated (they could not
     * change the answer) and the rules decide */
    {
        topsync_topology_t *kunpeng;
        CHECK_EQ(topsync_topology_load_synthetic(&kunpeng, "pack:2 numa:2 l3:1 core:32 pu:1"), 0);
        hwloc_bitmap_t ksets[64];
        topsync_barrier_options_t ko;
        bound_auto_options(&ko, kunpeng, 64, ksets);
        CHECK_EQ(topsync_barrier_create(&b, 64, &ko), 0);
        char kwhy[1100];
        snprintf(kwhy, sizeof kwhy, "%s", topsync_barrier_explain(b));
        if (!strstr(kwhy, "rules: topo"))
            fprintf(stderr, "explain: %s\n", kwhy);
        const char *kprefix = "auto: model (per-level default latencies): predicted ";
        CHECK(strncmp(kwhy, kprefix, strlen(kprefix)) == 0);
        CHECK(strstr(kwhy, " fastest at K = 1 (") != NULL);
        CHECK(strstr(kwhy, "within the model's error on the ratio of two barriers") != NULL);
        CHECK(strstr(kwhy, "docs/model.md): rules: topo, since the participants' hierarchy has "
                           "groups below TOP") != NULL);
        CHECK(strncmp(topsync_barrier_algorithm(b), "topo:", 5) == 0);
        topsync_barrier_destroy(b);
        /* the same case again: remembered, the same answer */
        CHECK_EQ(topsync_barrier_create(&b, 64, &ko), 0);
        CHECK_STR(topsync_barrier_explain(b), kwhy);
        topsync_barrier_destroy(b);
        for (int i = 0; i < 64; i++)
            hwloc_bitmap_free(ksets[i]);
        topsync_topology_destroy(kunpeng);
    }
    /* an explicit choice says so */
    o.algorithm = "mcs";
    CHECK_EQ(topsync_barrier_create(&b, 2, &o), 0);
    CHECK_STR(topsync_barrier_explain(b), "given: options.algorithm");
    topsync_barrier_destroy(b);
    o.algorithm = "auto";
    setenv("TOPSYNC_AUTO", "rules", 1);

    /* The same 2 participants, with 8 runnable processes sharing their 2
     * CPUs (cpu_sharers, as the MPI library sets it for a pair of an
     * oversubscribed job): oversubscribed, so the central counter (issue 11) */
    o.cpu_sharers = 8;
    CHECK_EQ(topsync_barrier_create(&b, 2, &o), 0);
    CHECK_STR(topsync_barrier_algorithm(b), "sense-reversing");
    topsync_barrier_destroy(b);
    o.cpu_sharers = 2; /* no more than their CPUs: as before */
    CHECK_EQ(topsync_barrier_create(&b, 2, &o), 0);
    CHECK_STR(topsync_barrier_algorithm(b), "topo:l2/global");
    topsync_barrier_destroy(b);
    o.cpu_sharers = 0;

    /* Unbound ranks: no hierarchy, a flat algorithm. */
    hwloc_bitmap_t all[2];
    topsync_placement_compute(t, 2, TOPSYNC_MAP_BY_CORE, TOPSYNC_BIND_TO_NONE, all);
    o.cpusets = (const hwloc_const_bitmap_t *)all;
    CHECK_EQ(topsync_barrier_create(&b, 2, &o), 0);
    CHECK(strncmp(topsync_barrier_algorithm(b), "topo", 4) != 0);
    topsync_barrier_destroy(b);
    /* ... and topo itself says it runs flat. */
    o.algorithm = "topo";
    CHECK_EQ(topsync_barrier_create(&b, 2, &o), 0);
    CHECK_STR(topsync_barrier_algorithm(b), "topo:unbound/global");
    CHECK(!topsync_groups_hierarchical(topsync_barrier_groups(b)));
    topsync_barrier_destroy(b);
    for (int i = 0; i < 2; i++) {
        hwloc_bitmap_free(sets[i]);
        hwloc_bitmap_free(all[i]);
    }
    topsync_topology_destroy(t);

    /* Oversubscription counts the CPUs the participants are bound to, not
     * the creating process's: 4 ranks each on its own core of a 4-core
     * machine are not oversubscribed, 8 ranks on those 4 cores are. */
    topsync_topology_load_synthetic(&t, "pack:4 core:1 pu:1");
    hwloc_bitmap_t cores[8];
    topsync_placement_compute(t, 8, TOPSYNC_MAP_BY_CORE, TOPSYNC_BIND_TO_CORE, cores);
    o.algorithm = "auto";
    o.topology = t;
    o.cpusets = (const hwloc_const_bitmap_t *)cores;
    CHECK_EQ(topsync_barrier_create(&b, 4, &o), 0);
    CHECK_STR(topsync_barrier_algorithm(b), "dissemination");
    topsync_barrier_destroy(b);
    CHECK_EQ(topsync_barrier_create(&b, 8, &o), 0);
    CHECK_STR(topsync_barrier_algorithm(b), "sense-reversing");
    topsync_barrier_destroy(b);
    /* Bound, but no level shared by two cores: topo runs one flat group. */
    o.algorithm = "topo";
    CHECK_EQ(topsync_barrier_create(&b, 4, &o), 0);
    CHECK_STR(topsync_barrier_algorithm(b), "topo:flat/global");
    CHECK(topsync_groups_hierarchical(topsync_barrier_groups(b)));
    topsync_barrier_destroy(b);
    for (int i = 0; i < 8; i++)
        hwloc_bitmap_free(cores[i]);
    topsync_topology_destroy(t);
    /* TOPSYNC_AUTO: the steps, validated */
    setenv("TOPSYNC_AUTO", "model,guess", 1);
    CHECK_EQ(topsync_barrier_create(&b, 2, NULL), -EINVAL);
    CHECK_MSG("TOPSYNC_AUTO='model,guess' is not valid (unknown step 'guess'); valid: a "
              "comma-separated list of tuning, model, rules");
    CHECK_EQ(topsync_environment_check(), -EINVAL);
    setenv("TOPSYNC_AUTO", "tuning,", 1);
    CHECK_EQ(topsync_environment_check(), -EINVAL);
    setenv("TOPSYNC_AUTO", "tuning,rules", 1);
    CHECK_EQ(topsync_environment_check(), 0);
    /* one rule for every list (issue 37 item 12): a repeated word is
     * refused, as in topo's level lists; words in any case */
    setenv("TOPSYNC_AUTO", "rules,rules", 1);
    CHECK_EQ(topsync_environment_check(), -EINVAL);
    CHECK_MSG("(step 'rules' given twice)");
    setenv("TOPSYNC_AUTO", "Model,RULES", 1);
    CHECK_EQ(topsync_environment_check(), 0);
    unsetenv("TOPSYNC_AUTO");
}

static void test_layout(void)
{
    long page = sysconf(_SC_PAGESIZE);
    for (size_t i = 0; i < NBASE; i++) {
        topsync_barrier_options_t o;
        topsync_barrier_options_init(&o);
        o.algorithm = base_algorithms[i];
        for (unsigned n = 1; n <= 130; n += 43) {
            size_t size = 0;
            CHECK_EQ(topsync_barrier_segment_size(n, &o, &size), 0);
            /* A global block and n rank blocks, all of the same page-multiple length. */
            CHECK(size % (size_t)page == 0);
            CHECK(size % (n + 1) == 0);
            CHECK((size / (n + 1)) % (size_t)page == 0);
        }
        o.line_size = 256;
        size_t big = 0, small = 0;
        CHECK_EQ(topsync_barrier_segment_size(8, &o, &big), 0);
        o.line_size = 64;
        CHECK_EQ(topsync_barrier_segment_size(8, &o, &small), 0);
        CHECK(big >= small);
    }
}

/* A segment kept from a destroyed barrier and handed to the next one of the
 * same size (lifecycle.c) must read as a fresh one: every algorithm after
 * every other, 3 threads, each episode checked (nobody leaves before all
 * arrived). A reused segment with the last barrier's words would hang or
 * let a thread through early. */
struct reuse_run {
    topsync_barrier_t *b;
    unsigned rank;
    _Atomic unsigned *arrivals;
    _Atomic unsigned *early;
};

static void *reuse_thread(void *arg)
{
    struct reuse_run *r = arg;
    for (unsigned e = 0; e < 200; e++) {
        /* relaxed: the barrier orders these counts (its own acquire/release) */
        atomic_fetch_add_explicit(r->arrivals, 1, memory_order_relaxed);
        topsync_barrier_wait(r->b, r->rank);
        if (atomic_load_explicit(r->arrivals, memory_order_relaxed) < 3 * (e + 1))
            atomic_fetch_add_explicit(r->early, 1, memory_order_relaxed);
        topsync_barrier_wait(r->b, r->rank); /* nobody counts e + 2 before all checked */
    }
    return NULL;
}

static void test_segment_reuse(void)
{
    for (size_t i = 0; i < 2 * NBASE; i++) {
        topsync_barrier_t *b = create(base_algorithms[i % NBASE], 3);
        CHECK(b != NULL);
        if (!b)
            continue;
        _Atomic unsigned arrivals = 0, early = 0;
        struct reuse_run runs[3];
        pthread_t tid[3];
        for (unsigned r = 0; r < 3; r++) {
            runs[r] = (struct reuse_run){b, r, &arrivals, &early};
            CHECK_EQ(pthread_create(&tid[r], NULL, reuse_thread, &runs[r]), 0);
        }
        for (unsigned r = 0; r < 3; r++)
            pthread_join(tid[r], NULL);
        CHECK_EQ(atomic_load(&early), 0);
        CHECK_EQ(atomic_load(&arrivals), 600);
        CHECK_EQ(topsync_barrier_destroy(b), 0);
    }
}

/* The attach path: every process maps the same zero-filled segment and
 * attaches its own rank, they meet, then run episodes and check each one. */
struct attach_shared {
    _Atomic unsigned attached;
    _Atomic unsigned long arrivals;
    _Atomic unsigned failures;
};

static void test_attach_processes(void)
{
    const unsigned n = 4, episodes = 3000;
    for (size_t a = 0; a < NBASE; a++) {
        topsync_barrier_options_t o;
        topsync_barrier_options_init(&o);
        o.algorithm = base_algorithms[a];
        size_t size;
        CHECK_EQ(topsync_barrier_segment_size(n, &o, &size), 0);
        void *seg = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        struct attach_shared *sh =
            mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        CHECK(seg != MAP_FAILED && sh != MAP_FAILED);
        pid_t pids[4];
        for (unsigned r = 0; r < n; r++) {
            pids[r] = fork();
            if (pids[r] == 0) {
                topsync_barrier_t *b;
                if (topsync_barrier_attach(&b, n, &o, seg, size, r) != 0)
                    _exit(3);
                atomic_fetch_add(&sh->attached, 1);
                while (atomic_load(&sh->attached) < n)
                    usleep(100);
                for (unsigned long k = 1; k <= episodes; k++) {
                    atomic_fetch_add_explicit(&sh->arrivals, 1, memory_order_relaxed);
                    topsync_barrier_wait(b, r);
                    if (atomic_load_explicit(&sh->arrivals, memory_order_relaxed) < k * n)
                        atomic_fetch_add(&sh->failures, 1);
                }
                topsync_barrier_destroy(b);
                _exit(0);
            }
        }
        int ok = 1;
        for (unsigned r = 0; r < n; r++) {
            int st;
            waitpid(pids[r], &st, 0);
            ok &= WIFEXITED(st) && WEXITSTATUS(st) == 0;
        }
        CHECK(ok);
        CHECK_EQ(atomic_load(&sh->failures), 0);
        CHECK_EQ(atomic_load(&sh->arrivals), (long long)episodes * n);
        munmap(seg, size);
        munmap(sh, sizeof *sh);
    }
}

/* topsync_barrier_wait in a child; its stderr and status. */
static int wait_in_child(topsync_barrier_t *b, unsigned rank, char *msg, size_t size)
{
    int fds[2];
    if (pipe(fds) < 0)
        return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 2);
        topsync_barrier_wait(b, rank);
        _exit(0);
    }
    close(fds[1]);
    ssize_t len = read(fds[0], msg, size - 1);
    msg[len > 0 ? len : 0] = '\0';
    close(fds[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    return st;
}

static void test_bad_input(void)
{
    topsync_barrier_t *b = (topsync_barrier_t *)1;
    CHECK_EQ(topsync_barrier_create(&b, 0, NULL), -EINVAL);
    CHECK(b == NULL);
    CHECK_MSG("n = 0");
    CHECK_EQ(topsync_barrier_create(NULL, 2, NULL), -EINVAL);
    /* beyond the limit: said so, not "out of memory" somewhere inside */
    CHECK_EQ(topsync_barrier_create(&b, 4000000000u, NULL), -EINVAL);
    CHECK_MSG("limit is 16777216");
    CHECK_EQ(topsync_barrier_create(&b, TOPSYNC_BARRIER_MAX_PARTICIPANTS + 1, NULL), -EINVAL);
    size_t bytes;
    CHECK_EQ(topsync_barrier_segment_size(4000000000u, NULL, &bytes), -EINVAL);

    topsync_barrier_options_t o;
    topsync_barrier_options_init(&o);
    o.line_size = 48;
    CHECK_EQ(topsync_barrier_create(&b, 2, &o), -EINVAL);
    CHECK_MSG("line size 48");
    o.line_size = 16;
    CHECK_EQ(topsync_barrier_create(&b, 2, &o), -EINVAL);
    o.line_size = 0;
    o.wait = (topsync_wait_policy_t)42;
    CHECK_EQ(topsync_barrier_create(&b, 2, &o), -EINVAL);
    CHECK_MSG("invalid wait policy");
    o.wait = TOPSYNC_WAIT_DEFAULT;
    o.algorithm = "topo:numa,bogus";
    CHECK_EQ(topsync_barrier_create(&b, 2, &o), -EINVAL);
    CHECK_MSG("unknown level 'bogus'");
    o.algorithm = NULL;

    /* cpusets without a topology; groups for another n */
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    hwloc_const_bitmap_t sets[2] = {set, set};
    o.cpusets = sets;
    CHECK_EQ(topsync_barrier_create(&b, 2, &o), -EINVAL);
    CHECK_MSG("without their topology");
    o.cpusets = NULL;
    hwloc_bitmap_free(set);
    topsync_groups_t *g;
    topsync_groups_build_flat(&g, 3);
    o.groups = g;
    CHECK_EQ(topsync_barrier_create(&b, 2, &o), -EINVAL);
    CHECK_MSG("groups are for 3 participants");
    topsync_groups_destroy(g);
    o.groups = NULL;

    /* attach: bad segment, short segment, bad rank */
    size_t size;
    CHECK_EQ(topsync_barrier_segment_size(4, NULL, &size), 0);
    CHECK_EQ(topsync_barrier_segment_size(0, NULL, &size), -EINVAL);
    CHECK_EQ(topsync_barrier_segment_size(4, NULL, NULL), -EINVAL);
    void *seg = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK_EQ(topsync_barrier_attach(&b, 4, NULL, NULL, size, 0), -EINVAL);
    CHECK_EQ(topsync_barrier_attach(&b, 4, NULL, (char *)seg + 8, size - 8, 0), -EINVAL);
    CHECK_MSG("not page aligned");
    CHECK_EQ(topsync_barrier_attach(&b, 4, NULL, seg, size - 4096, 0), -EINVAL);
    CHECK_MSG("needed");
    CHECK_EQ(topsync_barrier_attach(&b, 4, NULL, seg, size, 4), -EINVAL);
    CHECK_MSG("rank 4 out of range");
    munmap(seg, size);
    /* a segment mapped read-only (or partly): an error, not SIGSEGV */
    seg = mmap(NULL, size, PROT_READ, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK_EQ(topsync_barrier_attach(&b, 4, NULL, seg, size, 0), -EINVAL);
    CHECK_MSG("readable and writable");
    CHECK_EQ(mprotect(seg, size, PROT_READ | PROT_WRITE), 0);
    CHECK_EQ(mprotect((char *)seg + size - 4096, 4096, PROT_READ), 0);
    CHECK_EQ(topsync_barrier_attach(&b, 4, NULL, seg, size, 0), -EINVAL);
    CHECK_EQ(mprotect((char *)seg + size - 4096, 4096, PROT_READ | PROT_WRITE), 0);
    CHECK_EQ(topsync_barrier_attach(&b, 4, NULL, seg, size, 0), 0);
    topsync_barrier_destroy(b);
    munmap(seg, size);

    /* wait_checked */
    CHECK_EQ(topsync_barrier_create(&b, 1, NULL), 0);
    CHECK_EQ(topsync_barrier_wait_checked(b, 0), 0);
    CHECK_EQ(topsync_barrier_wait_checked(b, 1), -EINVAL);
    CHECK_MSG("rank 1 out of range (1 participants)");
    CHECK_EQ(topsync_barrier_wait_checked(NULL, 0), -EINVAL);

    /* topsync_barrier_wait cannot return an error: it aborts with a message. */
    char msg[256] = "";
    int st = wait_in_child(b, 7, msg, sizeof msg);
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
    CHECK(strstr(msg, "rank 7 out of range (1 participants)") != NULL);
    topsync_barrier_destroy(b);
    CHECK_EQ(topsync_barrier_destroy(NULL), 0);
}

/* API misuse the docs promise to catch (issue 13 item 16). */
static void test_misuse(void)
{
    char msg[512];
    int st = wait_in_child(NULL, 0, msg, sizeof msg);
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
    CHECK(strstr(msg, "barrier is NULL") != NULL);

    topsync_barrier_t *b;
    CHECK_EQ(topsync_barrier_create(&b, 2, NULL), 0);
    CHECK_EQ(topsync_barrier_destroy(b), 0);
    CHECK_EQ(topsync_barrier_destroy(b), -EINVAL);
    CHECK_MSG("was destroyed");
    CHECK_EQ(topsync_barrier_wait_checked(b, 0), -EINVAL);
    CHECK_MSG("was destroyed");
    st = wait_in_child(b, 0, msg, sizeof msg);
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
    CHECK(strstr(msg, "was destroyed") != NULL);

    /* participants attached with different n, algorithm or wait policy are
     * refused at attach instead of hanging in the first wait */
    topsync_barrier_options_t o;
    topsync_barrier_options_init(&o);
    o.algorithm = "dissemination";
    size_t size, size3;
    CHECK_EQ(topsync_barrier_segment_size(4, &o, &size), 0);
    CHECK_EQ(topsync_barrier_segment_size(3, &o, &size3), 0);
    if (size3 > size)
        size = size3;
    void *seg = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    topsync_barrier_t *r0, *r1;
    CHECK_EQ(topsync_barrier_attach(&r0, 4, &o, seg, size, 0), 0);
    CHECK_EQ(topsync_barrier_attach(&r1, 3, &o, seg, size, 1), -EINVAL);
    CHECK_MSG("attaches with n = 3");
    CHECK_MSG("different ones");
    o.algorithm = "mcs";
    CHECK_EQ(topsync_barrier_attach(&r1, 4, &o, seg, size, 1), -EINVAL);
    o.algorithm = "dissemination";
    o.wait = TOPSYNC_WAIT_SPIN;
    CHECK_EQ(topsync_barrier_attach(&r1, 4, &o, seg, size, 1), -EINVAL);
    CHECK_MSG("wait spin");
    o.wait = TOPSYNC_WAIT_DEFAULT;
    CHECK_EQ(topsync_barrier_attach(&r1, 4, &o, seg, size, 1), 0);
    topsync_barrier_destroy(r0);
    topsync_barrier_destroy(r1);
    munmap(seg, size);
}

int main(void)
{
    unsetenv("TOPSYNC_BARRIER");
    unsetenv("TOPSYNC_WAIT");
    unsetenv("TOPSYNC_SPIN");
    test_names();
    test_environment();
    test_auto_choice();
    test_layout();
    test_segment_reuse();
    test_attach_processes();
    test_bad_input();
    test_misuse();
    return check_summary();
}
