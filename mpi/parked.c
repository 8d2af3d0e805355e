/*
 * Node barriers of freed communicators, kept for a later communicator of
 * the same ranks: a program that makes, uses and frees communicators in a
 * loop (a library's MPI_Comm_dup per object or per call) would otherwise
 * create, map, fault in and unlink a segment on every node each time, 30-60
 * us per set-up on this VM. A freed communicator's barrier, collectives and
 * segment are parked here instead; the next set-up of the same ranks under
 * the same layout takes them back when every rank of it parked the same
 * ones, agreed in the set-up's first MPI_Allreduce (comm_setup.c).
 * The why: docs/design.md section 8.18.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "mpi_private.h"

/* A few: each holds its segment's pages (tens of KiB per node rank). */
#define TS_PARKED_KEPT 4

struct parked {
    int *world_ranks; /* NULL: a free slot */
    int size;
    uint32_t layout_digest;
    uint64_t token;
    topsync_barrier_t *barrier;
    topsync_coll_t *coll;
    void *segment;
    size_t segment_size;
    MPI_Comm *idle_comm;
    unsigned long when; /* for eviction */
};

static pthread_mutex_t parked_lock = PTHREAD_MUTEX_INITIALIZER;
static struct parked pool[TS_PARKED_KEPT];
static unsigned long clock_ticks;

void ts_mpi_node_sync_free(topsync_barrier_t *barrier, topsync_coll_t *coll, void *segment,
                           size_t segment_size, MPI_Comm *idle_comm)
{
    topsync_barrier_destroy(barrier);
    topsync_coll_destroy(coll);
    if (segment)
        munmap(segment, segment_size);
    free(idle_comm);
}

bool ts_mpi_park(struct comm_state *s)
{
    if (!s->token || !s->world_ranks || !s->barrier)
        return false;
    struct parked evicted = {0};
    pthread_mutex_lock(&parked_lock);
    struct parked *slot = NULL;
    for (int i = 0; !slot && i < TS_PARKED_KEPT; i++)
        if (!pool[i].world_ranks)
            slot = &pool[i];
    if (!slot) { /* the longest parked goes */
        slot = &pool[0];
        for (int i = 1; i < TS_PARKED_KEPT; i++)
            if (pool[i].when < slot->when)
                slot = &pool[i];
        evicted = *slot;
    }
    *slot = (struct parked){
        .world_ranks = s->world_ranks,
        .size = s->size,
        .layout_digest = s->layout_digest,
        .token = s->token,
        .barrier = s->barrier,
        .coll = s->coll,
        .segment = s->segment,
        .segment_size = s->segment_size,
        .idle_comm = s->idle_comm,
        .when = ++clock_ticks,
    };
    pthread_mutex_unlock(&parked_lock);
    s->world_ranks = NULL;
    s->token = 0;
    s->barrier = NULL;
    s->coll = NULL;
    s->segment = NULL;
    s->segment_size = 0;
    s->idle_comm = NULL;
    if (evicted.world_ranks) { /* outside the lock: munmap may take a while */
        ts_mpi_node_sync_free(evicted.barrier, evicted.coll, evicted.segment, evicted.segment_size,
                              evicted.idle_comm);
        free(evicted.world_ranks);
    }
    return true;
}

uint64_t ts_mpi_unpark(const int *world_ranks, int size, uint32_t layout_digest,
                       struct comm_state *s)
{
    pthread_mutex_lock(&parked_lock);
    struct parked *found = NULL;
    for (int i = 0; i < TS_PARKED_KEPT; i++) {
        struct parked *p = &pool[i];
        if (p->world_ranks && p->size == size && p->layout_digest == layout_digest &&
            !memcmp(p->world_ranks, world_ranks, (size_t)size * sizeof *world_ranks) &&
            (!found || p->when > found->when))
            found = p;
    }
    struct parked taken = {0};
    if (found) {
        taken = *found;
        memset(found, 0, sizeof *found);
    }
    pthread_mutex_unlock(&parked_lock);
    if (!found)
        return 0;
    free(s->world_ranks);
    s->world_ranks = taken.world_ranks;
    s->size = taken.size;
    s->layout_digest = taken.layout_digest;
    s->token = taken.token;
    s->barrier = taken.barrier;
    s->coll = taken.coll;
    s->segment = taken.segment;
    s->segment_size = taken.segment_size;
    s->idle_comm = taken.idle_comm;
    return taken.token;
}
