/*
 * Which node each process is on, learnt once at MPI_Init/MPI_Init_thread.
 * The why: docs/design.md section 8.19.
 */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/env.h"
#include "base/error.h"
#include "base/hash.h"
#include "base/keywords.h"
#include "node/node.h"

static int32_t my_node_id = -1;
static int32_t my_world_leader;
static int32_t my_thread_level = -1;
static MPI_Comm world_leaders; /* valid once node_map_done */
static int node_map_done;
static int node_processes; /* the job's processes on this node, from MPI_Init */

/* A whole number from 1 to max in a variable's value `v`, by the rule of
 * every TOPSYNC_* variable (src/base/env.h): `unset` when unset (NULL) or
 * empty, 0 when invalid (node/setup.c reports it). */
static int whole_number(const char *v, int unset, long max)
{
    long k;
    if (!v || !*v)
        return unset;
    return ts_env_parse_whole(v, 1, max, &k) ? (int)k : 0;
}

int ts_mpi_node_split_of(const char *value)
{
    return whole_number(value, 1, 1 << 20);
}

int ts_mpi_node_split(void)
{
    return ts_mpi_node_split_of(ts_getenv("TOPSYNC_NODE_SPLIT"));
}

int ts_mpi_ops_of(const char *value)
{
    /* the whole value, or a list of calls: the base's word tables */
    static const ts_keyword_t whole[] = {
        {"all", TS_MPI_OPS_ALL, false}, {"none", 0, false}, {NULL, 0, false}};
    static const ts_keyword_t calls[] = {{"barrier", 1 << TS_MPI_CALL_BARRIER, false},
                                         {"allreduce", 1 << TS_MPI_CALL_ALLREDUCE, false},
                                         {"reduce", 1 << TS_MPI_CALL_REDUCE, false},
                                         {"bcast", 1 << TS_MPI_CALL_BCAST, false},
                                         {NULL, 0, false}};
    if (!value || !*value)
        return TS_MPI_OPS_ALL;
    const ts_keyword_t *w = ts_keyword_find(whole, value);
    if (w)
        return w->value;
    int mask = 0;
    for (const char *at = value;; at++) {
        size_t len = strcspn(at, ",");
        w = ts_keyword_find_n(calls, at, len);
        if (!w || (mask & w->value)) /* unknown (or empty), or repeated */
            return -1;
        mask |= w->value;
        at += len;
        if (!*at)
            return mask;
    }
}

int ts_mpi_setup_at_of(const char *value)
{
    return whole_number(value, 2, 1000000);
}

int ts_mpi_setup_at(void)
{
    return ts_mpi_setup_at_of(ts_getenv("TOPSYNC_MPI_SETUP_AT"));
}

/* TOPSYNC_MPI_SETUP_AT as MPI_COMM_WORLD's set-up agreed it on every rank
 * (0: not yet). Deferring by each rank's own reading would let ranks given
 * different values meet a set-up's collectives with PMPI_Barrier: a hang.
 * relaxed: it is the whole message. Before it is set (MPI_Init was not
 * ours, as from Fortran, and MPI_COMM_WORLD has not had its first barrier)
 * each rank reads its own, the same on every rank unless the launcher
 * gave them different ones, which MPI_COMM_WORLD's set-up reports. */
static _Atomic int agreed_setup_at;

int ts_mpi_agreed_setup_at(void)
{
    return atomic_load_explicit(&agreed_setup_at, memory_order_relaxed);
}

void ts_mpi_agree_setup_at(int at)
{
    atomic_store_explicit(&agreed_setup_at, at, memory_order_relaxed);
}

bool ts_mpi_init_seen(void)
{
    return node_map_done;
}

int ts_mpi_verbose(void)
{
    /* read once: every MPI call that may report asks (0 when invalid:
     * node/setup.c reports it) */
    static _Atomic int level = -1;
    int l = atomic_load_explicit(&level, memory_order_relaxed); /* the value is the message */
    if (l < 0) {
        l = ts_env_verbose();
        if (l < 0)
            l = 0;
        atomic_store_explicit(&level, l, memory_order_relaxed);
    }
    return l;
}

void ts_mpi_node_map_init(int provided)
{
    my_thread_level = provided;
    world_leaders = MPI_COMM_NULL;
    node_map_done = 1;
    int split = ts_mpi_node_split();
    if (split < 1)
        split = 1; /* reported at the first set-up, on every rank */
    int wrank, srank, ssize, prank;
    PMPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    if (wrank == 0 && ts_mpi_verbose() >= 2) {
        fprintf(stderr, "topsync-mpi: MPI library %s\n", ts_mpi_library());
        ts_mpi_chain_report();
    }
    MPI_Comm shared, pseudo;
    if (PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, wrank, MPI_INFO_NULL, &shared) !=
        MPI_SUCCESS)
        return;
    PMPI_Comm_rank(shared, &srank);
    PMPI_Comm_size(shared, &ssize);
    node_processes = ssize;
    /* the node's id: its first world rank (the set-up cuts pseudo-nodes
     * itself, from this id and the ranks' order) */
    int first = wrank;
    TS_MPI_OWN(Bcast)(&first, 1, MPI_INT, 0, shared);
    /* the same cut as the set-up's: index * split / count, in rank order */
    int color = (int)((long)srank * split / ssize);
    PMPI_Comm_split(shared, color, srank, &pseudo);
    PMPI_Comm_rank(pseudo, &prank);
    PMPI_Comm_free(&pseudo);
    PMPI_Comm_free(&shared);
    int leader = prank == 0, nodes = leader;
    TS_MPI_OWN(Allreduce)(MPI_IN_PLACE, &nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (nodes > 1)
        PMPI_Comm_split(MPI_COMM_WORLD, leader ? 0 : MPI_UNDEFINED, wrank, &world_leaders);
    my_node_id = first;
    my_world_leader = world_leaders != MPI_COMM_NULL;
}

void ts_mpi_node_record(struct ts_node_record *out)
{
    char host[MPI_MAX_PROCESSOR_NAME + 1] = "";
    int len = 0;
    PMPI_Get_processor_name(host, &len);
    host[len >= 0 && len <= MPI_MAX_PROCESSOR_NAME ? len : 0] = '\0';
    int level = my_thread_level;
    if (level < 0)
        PMPI_Query_thread(&level);
    *out = (struct ts_node_record){
        .host_hash = ts_fnv1a64_str(TS_FNV1A64_OFFSET, host),
        .node_id = my_node_id,
        .world_leader = my_world_leader,
        .thread_level = level,
    };
}

int ts_mpi_node_processes(void)
{
    return node_processes;
}

MPI_Comm ts_mpi_world_leaders(void)
{
    return node_map_done ? world_leaders : MPI_COMM_NULL;
}

void ts_mpi_node_map_release(void)
{
    if (node_map_done && world_leaders != MPI_COMM_NULL)
        PMPI_Comm_free(&world_leaders); /* sets it to MPI_COMM_NULL */
    my_world_leader = 0;
}
