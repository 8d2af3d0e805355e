/*
 * Node barriers of freed communicators, kept for a later communicator of
 * the same ranks: a program that makes, uses and frees communicators in a
 * loop (a library's MPI_Comm_dup per object or per call) would otherwise
 * create, map, fault in and unlink a segment on every node each time, 30-60
 * us per set-up on this VM. A freed communicator's barrier, collectives and
 * segment are parked here instead; the next set-up of the same ranks under
 * the same layout takes them back when every rank of it parked the same
 * ones, agreed in the set-up's first MPI_Allreduce (node/setup.c).
 * The why: docs/design.md section 8.18.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "node/node.h"

/* A few: each holds its segment's pages (tens of KiB per node rank). */
#define TS_PARKED_KEPT 4

struct parked {
    struct ts_node_sync node; /* node.world_ranks NULL: a free slot */
    unsigned long when;       /* for eviction */
};

static pthread_mutex_t parked_lock = PTHREAD_MUTEX_INITIALIZER;
static struct parked pool[TS_PARKED_KEPT];
static unsigned long clock_ticks;

void ts_mpi_node_sync_free(struct ts_node_sync *node)
{
    if (node->barrier)
        ts_mpi_summary_untrack(node->barrier);
    if (node->coll)
        ts_mpi_summary_untrack(topsync_coll_barrier(node->coll));
    topsync_barrier_destroy(node->barrier);
    topsync_coll_destroy(node->coll);
    if (node->segment)
        munmap(node->segment, node->segment_size);
    free(node->idle_comm);
    free(node->world_ranks);
    memset(node, 0, sizeof *node);
}

bool ts_mpi_park(struct ts_node_sync *node)
{
    if (!node->token || !node->world_ranks || !node->barrier)
        return false;
    struct parked evicted = {0};
    pthread_mutex_lock(&parked_lock);
    struct parked *slot = NULL;
    for (int i = 0; !slot && i < TS_PARKED_KEPT; i++)
        if (!pool[i].node.world_ranks)
            slot = &pool[i];
    if (!slot) { /* the longest parked goes */
        slot = &pool[0];
        for (int i = 1; i < TS_PARKED_KEPT; i++)
            if (pool[i].when < slot->when)
                slot = &pool[i];
        evicted = *slot;
    }
    *slot = (struct parked){.node = *node, .when = ++clock_ticks};
    pthread_mutex_unlock(&parked_lock);
    memset(node, 0, sizeof *node);        /* moved */
    ts_mpi_node_sync_free(&evicted.node); /* outside the lock: munmap may take a while */
    return true;
}

void ts_mpi_parked_release(void)
{
    struct parked all[TS_PARKED_KEPT];
    pthread_mutex_lock(&parked_lock);
    memcpy(all, pool, sizeof all);
    memset(pool, 0, sizeof pool);
    pthread_mutex_unlock(&parked_lock);
    for (int i = 0; i < TS_PARKED_KEPT; i++) /* outside the lock, as in ts_mpi_park */
        ts_mpi_node_sync_free(&all[i].node);
}

uint64_t ts_mpi_unpark(const int *world_ranks, int size, uint32_t layout_digest,
                       struct ts_node_sync *node)
{
    pthread_mutex_lock(&parked_lock);
    struct parked *found = NULL;
    for (int i = 0; i < TS_PARKED_KEPT; i++) {
        const struct ts_node_sync *p = &pool[i].node;
        if (p->world_ranks && p->size == size && p->layout_digest == layout_digest &&
            !memcmp(p->world_ranks, world_ranks, (size_t)size * sizeof *world_ranks) &&
            (!found || pool[i].when > found->when))
            found = &pool[i];
    }
    struct ts_node_sync taken = {0};
    if (found) {
        taken = found->node;
        memset(found, 0, sizeof *found);
    }
    pthread_mutex_unlock(&parked_lock);
    if (!found)
        return 0;
    free(node->world_ranks);
    *node = taken;
    return taken.token;
}
