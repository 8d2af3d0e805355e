/*
 * Where a new reactive barrier starts: on the configuration that the last
 * barrier of the same shape in this process settled on (the home its
 * policy kept), not on the one the choice made, and probing the others as
 * rarely as that one had come to (its gap). A program that makes its
 * barriers anew (a pthread_barrier_init per phase, a benchmark per run)
 * otherwise paid, with every new barrier beside busy neighbours, the
 * windows its predecessor already paid to leave the choice, and its
 * probes of a configuration known to lose. docs/design.md section 10.6.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "barrier/barrier_private.h"
#include "barrier/reactive.h"

/*
 * A barrier's shape: its number of participants and its configurations in
 * order (algorithm and wait policy of each), and whether processes share
 * it. The same shape has the same configurations at the same indices, so
 * the index a policy kept means the same barrier in its successor.
 * Several shapes are remembered at once (a program may hold barriers of
 * several sizes); past MEMORY_SHAPES, the one used least recently goes.
 */
#define MEMORY_SHAPES 8
#define SHAPE_BYTES 320

struct remembered {
    char shape[SHAPE_BYTES]; /* "" : unused */
    unsigned home, gap;
    uint64_t used; /* when it was last kept or recalled, in `clock` */
};

static struct {
    pthread_mutex_t mutex;
    uint64_t clock;
    struct remembered shapes[MEMORY_SHAPES];
} memory = {PTHREAD_MUTEX_INITIALIZER, 0, {{"", 0, 0, 0}}};

/* The shape of rx's barrier, or "" when it does not fit (never remembered). */
static void shape_of(const ts_reactive *rx, bool shared, char shape[SHAPE_BYTES])
{
    size_t len = (size_t)snprintf(shape, SHAPE_BYTES, "%u%s", rx->config[0]->n,
                                  shared ? " processes" : " threads");
    for (unsigned c = 0; c < rx->nconfigs && len < SHAPE_BYTES; c++)
        len += (size_t)snprintf(shape + len, SHAPE_BYTES - len, " %s/%s", rx->config[c]->name,
                                topsync_barrier_wait_policy_name(rx->config[c]));
    if (len >= SHAPE_BYTES)
        shape[0] = '\0';
}

static struct remembered *find_locked(const char *shape)
{
    for (unsigned i = 0; i < MEMORY_SHAPES; i++)
        if (memory.shapes[i].shape[0] && !strcmp(memory.shapes[i].shape, shape))
            return &memory.shapes[i];
    return NULL;
}

unsigned ts_reactive_memory_recall(ts_reactive *rx, bool shared)
{
    char shape[SHAPE_BYTES];
    shape_of(rx, shared, shape);
    if (!shape[0])
        return 0;
    pthread_mutex_lock(&memory.mutex);
    struct remembered *r = find_locked(shape);
    unsigned home = 0;
    if (r && r->home < rx->nconfigs) {
        home = r->home;
        rx->policy->home = home;
        rx->policy->first_gap = r->gap;
        r->used = ++memory.clock;
    }
    pthread_mutex_unlock(&memory.mutex);
    return home;
}

void ts_reactive_memory_keep(const ts_reactive *rx, bool shared)
{
    char shape[SHAPE_BYTES];
    shape_of(rx, shared, shape);
    if (!shape[0])
        return;
    pthread_mutex_lock(&memory.mutex);
    struct remembered *r = find_locked(shape);
    if (!r) { /* an unused entry, else the least recently used one */
        r = &memory.shapes[0];
        for (unsigned i = 1; i < MEMORY_SHAPES && r->shape[0]; i++)
            if (!memory.shapes[i].shape[0] || memory.shapes[i].used < r->used)
                r = &memory.shapes[i];
        memcpy(r->shape, shape, SHAPE_BYTES);
    }
    r->home = rx->policy->home;
    r->gap = rx->policy->gap;
    r->used = ++memory.clock;
    pthread_mutex_unlock(&memory.mutex);
}
