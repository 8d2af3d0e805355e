/* RCL placement (design.md section 5.1-5.3) on the synthetic machines, with the expected
 * cores written out. */
#include <errno.h>

#include <topsync.h>

#include "check.h"

#define OAK "pack:2 numa:1 l3:1 core:4 pu:2"
#define JET "pack:1 l2:2 core:2 pu:1"
#define KUNPENG "pack:2 numa:2 l3:1 core:32 pu:1"
#define EPYC "pack:2 numa:4 l3:2 core:8 pu:2"

static topsync_topology_t *topo;

static topsync_rcl_usage_t *usage_on(const char *desc)
{
    topsync_topology_destroy(topo);
    topo = NULL;
    topsync_rcl_usage_t *u = NULL;
    CHECK_EQ(topsync_topology_load_synthetic(&topo, desc), 0);
    CHECK_EQ(topsync_rcl_usage_create(&u, topo), 0);
    return u;
}

static unsigned server(topsync_rcl_usage_t *u, topsync_rcl_policy_t p)
{
    unsigned core = 9999;
    CHECK_EQ(topsync_rcl_place_server(u, p, &core), 0);
    topsync_rcl_usage_add_server(u, core);
    return core;
}

static unsigned worker(topsync_rcl_usage_t *u)
{
    unsigned core = 9999;
    CHECK_EQ(topsync_rcl_place_worker(u, &core), 0);
    return core;
}

static void test_oak_servers_and_memory(void)
{
    topsync_rcl_usage_t *u = usage_on(OAK);
    CHECK_EQ(topsync_rcl_core_node(u, 3), 0);
    CHECK_EQ(topsync_rcl_core_node(u, 4), 1);
    int node;
    CHECK_EQ(topsync_rcl_memory_node(u, &node), 0);
    CHECK_EQ(node, -1); /* no server: default allocation */
    /* pack: the first server on node 0 (tie, lowest), the next beside it */
    CHECK_EQ(server(u, TOPSYNC_RCL_PACK), 0);
    topsync_rcl_memory_node(u, &node);
    CHECK_EQ(node, 0);
    CHECK_EQ(server(u, TOPSYNC_RCL_PACK), 1);
    topsync_rcl_memory_node(u, &node);
    CHECK_EQ(node, 0); /* still one node: memory stays bound to it */
    /* spread: the least busy node, node 1 */
    CHECK_EQ(server(u, TOPSYNC_RCL_SPREAD), 4);
    topsync_rcl_memory_node(u, &node);
    CHECK_EQ(node, -1);                         /* servers on two nodes: default allocation again */
    CHECK_EQ(server(u, TOPSYNC_RCL_SPREAD), 5); /* node 1 hosts 1 server, node 0 two */
    topsync_rcl_usage_destroy(u);
}

static void test_keep_one_core(void)
{
    topsync_rcl_usage_t *u = usage_on(OAK);
    /* pack fills node 0 (cores 0..3), then node 1 */
    for (unsigned c = 0; c < 7; c++)
        CHECK_EQ(server(u, TOPSYNC_RCL_PACK), c);
    /* 7 server cores, 1 free: share server cores round-robin, never core 7 */
    unsigned core;
    for (unsigned k = 0; k < 9; k++) {
        CHECK_EQ(topsync_rcl_place_server(u, TOPSYNC_RCL_PACK, &core), 0);
        CHECK_EQ(core, k % 7);
    }
    /* the free core is left to workers */
    CHECK_EQ(worker(u), 7);
    topsync_rcl_usage_destroy(u);
}

static void test_application_threads(void)
{
    topsync_rcl_usage_t *u = usage_on(OAK);
    topsync_rcl_usage_add_app_thread(u, 0);
    topsync_rcl_usage_add_app_thread(u, 1);
    CHECK_EQ(server(u, TOPSYNC_RCL_PACK), 2); /* cores 0 and 1 run application threads */
    topsync_rcl_usage_destroy(u);

    /* Only cores with application threads left free: one is taken. */
    u = usage_on(JET);
    topsync_rcl_usage_add_app_thread(u, 2);
    topsync_rcl_usage_add_app_thread(u, 3);
    CHECK_EQ(server(u, TOPSYNC_RCL_PACK), 0);
    CHECK_EQ(server(u, TOPSYNC_RCL_PACK), 1);
    CHECK_EQ(server(u, TOPSYNC_RCL_PACK), 2); /* 2 free cores: still a core of its own */
    topsync_rcl_usage_destroy(u);
}

static void test_oak_workers(void)
{
    /* Server on node 1 (core 4): workers 1..3 fill the rest of its L3/node
     * (5, 6, 7), workers 4..7 go to the other node (0..3); then two per core
     * in the same order. */
    topsync_rcl_usage_t *u = usage_on(OAK);
    topsync_rcl_usage_add_server(u, 4);
    unsigned expected[] = {5, 6, 7, 0, 1, 2, 3, 5, 6, 7, 0};
    for (unsigned w = 0; w < sizeof expected / sizeof expected[0]; w++)
        CHECK_EQ(worker(u), expected[w]);
    CHECK_EQ(topsync_rcl_usage_workers(u, 5), 2);
    CHECK_EQ(topsync_rcl_usage_workers(u, 4), 0); /* never on the server's core */
    topsync_rcl_usage_destroy(u);
}

static void test_jet_and_kunpeng_workers(void)
{
    /* Jet: the L2 partner of the server first. */
    topsync_rcl_usage_t *u = usage_on(JET);
    topsync_rcl_usage_add_server(u, 0);
    unsigned jet[] = {1, 2, 3, 1, 2, 3};
    for (unsigned w = 0; w < 6; w++)
        CHECK_EQ(worker(u), jet[w]);
    topsync_rcl_usage_destroy(u);

    /* Kunpeng 920, server on core 40 (NUMA 1): its NUMA node/L3 (32..63
     * without 40), then the rest of package 0 (0..31), then package 1. */
    u = usage_on(KUNPENG);
    topsync_rcl_usage_add_server(u, 40);
    for (unsigned c = 32; c < 64; c++)
        if (c != 40)
            CHECK_EQ(worker(u), c);
    for (unsigned c = 0; c < 32; c++)
        CHECK_EQ(worker(u), c);
    CHECK_EQ(worker(u), 64);
    topsync_rcl_usage_destroy(u);

    /* EPYC-like: the server's CCX (L3 of 8 cores) first, then its NUMA node. */
    u = usage_on(EPYC);
    topsync_rcl_usage_add_server(u, 9);
    CHECK_EQ(worker(u), 8);
    CHECK_EQ(worker(u), 10);
    for (unsigned k = 0; k < 5; k++)
        worker(u);          /* 11..15 */
    CHECK_EQ(worker(u), 0); /* the other CCX of the same NUMA node */
    topsync_rcl_usage_destroy(u);
}

static void test_epyc_servers(void)
{
    topsync_rcl_usage_t *u = usage_on(EPYC);
    CHECK_EQ(server(u, TOPSYNC_RCL_SPREAD), 0);
    CHECK_EQ(server(u, TOPSYNC_RCL_SPREAD), 16); /* NUMA node 1 */
    CHECK_EQ(server(u, TOPSYNC_RCL_SPREAD), 32); /* NUMA node 2 */
    CHECK_EQ(server(u, TOPSYNC_RCL_PACK), 1);    /* most busy: node 0 (tie, lowest) */
    topsync_rcl_usage_destroy(u);
}

static void test_errors(void)
{
    topsync_rcl_usage_t *u = usage_on(JET);
    unsigned core;
    CHECK_EQ(topsync_rcl_place_worker(u, &core), -EAGAIN);
    CHECK_MSG("no RCL server runs");
    CHECK_EQ(topsync_rcl_usage_add_server(u, 4), -EINVAL);
    CHECK_MSG("core 4 out of range (4 cores)");
    CHECK_EQ(topsync_rcl_usage_remove_server(u, 1), -EINVAL);
    CHECK_EQ(topsync_rcl_usage_remove_worker(u, 1), -EINVAL);
    CHECK_EQ(topsync_rcl_usage_servers(u, 9), -EINVAL);
    for (unsigned c = 0; c < 4; c++)
        topsync_rcl_usage_add_server(u, c);
    CHECK_EQ(topsync_rcl_place_worker(u, &core), -ENOSPC);
    CHECK_EQ(topsync_rcl_place_server(u, (topsync_rcl_policy_t)7, &core), -EINVAL);
    CHECK_EQ(topsync_rcl_place_server(NULL, TOPSYNC_RCL_PACK, &core), -EINVAL);
    topsync_rcl_usage_remove_server(u, 3);
    CHECK_EQ(topsync_rcl_usage_servers(u, 3), 0);
    CHECK_EQ(worker(u), 3);
    topsync_rcl_usage_destroy(u);
    topsync_rcl_usage_destroy(NULL);

    topsync_rcl_policy_t p;
    CHECK_EQ(topsync_rcl_policy_parse("spread", &p), 0);
    CHECK_EQ(p, TOPSYNC_RCL_SPREAD);
    CHECK_EQ(topsync_rcl_policy_parse("balanced", &p), -EINVAL);
    CHECK_MSG("valid: pack, spread");
    CHECK_EQ(topsync_rcl_usage_create(&u, NULL), -EINVAL);
}

int main(void)
{
    test_oak_servers_and_memory();
    test_keep_one_core();
    test_application_threads();
    test_oak_workers();
    test_jet_and_kunpeng_workers();
    test_epyc_servers();
    test_errors();
    topsync_topology_destroy(topo);
    return check_summary();
}
