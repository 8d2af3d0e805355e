/*
 * RCLAwareMalloc (Paznikov 2017; design.md section 5.1).
 * The why: docs/design.md section 8.16.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "rcl/rcl_private.h"

#define HEADER_MAGIC 0x52434c41u /* "RCLA" */
#define KIND_DEFAULT 1u
#define KIND_BOUND 2u

struct ts_alloc_header {
    size_t size;                         /* the caller's size */
    size_t mapped;                       /* KIND_BOUND: bytes to give hwloc_free() */
    struct ts_alloc_header *prev, *next; /* recorded list */
    topsync_rcl_runtime_t *owner;        /* the runtime whose counters hold it */
    uint32_t kind;
    uint32_t magic;
    uint32_t recorded;
    char pad[64 - 2 * sizeof(size_t) - 3 * sizeof(void *) - 3 * sizeof(uint32_t)];
};
static_assert(sizeof(struct ts_alloc_header) == 64, "blocks stay 64-byte aligned");

static size_t page_size(void)
{
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096;
}

hwloc_const_cpuset_t ts_rcl_node_cpuset(const topsync_rcl_runtime_t *rt, int node)
{
    const struct ts_level_units *numa = &rt->topo->levels[ts_level_index(TOPSYNC_LEVEL_NUMA)];
    if (node >= 0 && (unsigned)node < numa->count)
        return numa->cpusets[node];
    return hwloc_topology_get_topology_cpuset(rt->topo->hwloc);
}

static void unlink_recorded(topsync_rcl_runtime_t *rt, struct ts_alloc_header *h)
{
    if (h->prev)
        h->prev->next = h->next;
    else
        rt->recorded = h->next;
    if (h->next)
        h->next->prev = h->prev;
    h->prev = h->next = NULL;
    h->recorded = 0;
    rt->stats.recorded_blocks--;
}

/* Move the pages wholly inside block h to `set`'s node; bytes moved. */
static size_t migrate_block(topsync_rcl_runtime_t *rt, struct ts_alloc_header *h,
                            hwloc_const_cpuset_t set)
{
    size_t page = page_size();
    uintptr_t begin = (uintptr_t)(h + 1), end = begin + h->size;
    uintptr_t first = (begin + page - 1) / page * page, last = end / page * page;
    if (last <= first)
        return 0;
    if (hwloc_set_area_membind(rt->topo->hwloc, (void *)first, last - first, set,
                               HWLOC_MEMBIND_BIND, HWLOC_MEMBIND_MIGRATE) < 0)
        return 0;
    return last - first;
}

void ts_rcl_alloc_servers_changed(topsync_rcl_runtime_t *rt)
{
    int node = -1;
    if (rt->nservers)
        topsync_rcl_memory_node(rt->usage, &node);
    pthread_mutex_lock(&rt->alloc_mutex);
    /* relaxed: allocations only need some recent value; the blocks they get
     * are correct either way (bound or not) */
    atomic_store_explicit(&rt->memory_node, node, memory_order_relaxed);
    rt->nservers_alloc = rt->nservers;
    if (rt->nservers && node >= 0) {
        hwloc_const_cpuset_t set = ts_rcl_node_cpuset(rt, node);
        while (rt->recorded) {
            struct ts_alloc_header *h = rt->recorded;
            size_t moved = migrate_block(rt, h, set);
            unlink_recorded(rt, h);
            rt->stats.migrated_blocks++;
            rt->stats.migrated_bytes += moved;
        }
    }
    pthread_mutex_unlock(&rt->alloc_mutex);
}

size_t ts_rcl_alloc_live(topsync_rcl_runtime_t *rt)
{
    pthread_mutex_lock(&rt->alloc_mutex);
    size_t n = rt->live_blocks;
    pthread_mutex_unlock(&rt->alloc_mutex);
    return n;
}

void *topsync_rcl_malloc(topsync_rcl_runtime_t *rt, size_t size)
{
    if (!rt || !ts_rcl_runtime_is_live(rt)) {
        ts_fail(EINVAL, "topsync_rcl_malloc: %s",
                rt ? "the runtime was destroyed (or is not "
                     "an RCL runtime)"
                   : "NULL runtime");
        errno = EINVAL;
        return NULL;
    }
    if (size > SIZE_MAX - sizeof(struct ts_alloc_header) - page_size()) {
        ts_fail(ENOMEM, "topsync_rcl_malloc: %zu bytes is more than any allocation can hold", size);
        errno = ENOMEM;
        return NULL;
    }
    size_t total = sizeof(struct ts_alloc_header) + size;
    struct ts_alloc_header *h = NULL;
    /* relaxed: see ts_rcl_alloc_servers_changed() */
    int node = atomic_load_explicit(&rt->memory_node, memory_order_relaxed);
    if (node >= 0 && size >= page_size()) {
        h = hwloc_alloc_membind(rt->topo->hwloc, total, ts_rcl_node_cpuset(rt, node),
                                HWLOC_MEMBIND_BIND, 0);
        if (h) {
            h->kind = KIND_BOUND;
            h->mapped = total;
        }
    }
    if (!h) {
        if (posix_memalign((void **)&h, sizeof(struct ts_alloc_header), total)) {
            ts_fail(ENOMEM, "topsync_rcl_malloc: cannot allocate %zu bytes", size);
            errno = ENOMEM;
            return NULL;
        }
        h->kind = KIND_DEFAULT;
        h->mapped = 0;
    }
    h->size = size;
    h->owner = rt;
    h->magic = HEADER_MAGIC;
    h->prev = h->next = NULL;
    h->recorded = 0;
    pthread_mutex_lock(&rt->alloc_mutex);
    rt->live_blocks++;
    if (h->kind == KIND_BOUND) {
        rt->stats.bound_blocks++;
    } else if (!rt->nservers_alloc) {
        h->recorded = 1;
        h->next = rt->recorded;
        if (h->next)
            h->next->prev = h;
        rt->recorded = h;
        rt->stats.recorded_blocks++;
    } else {
        rt->stats.default_blocks++;
    }
    pthread_mutex_unlock(&rt->alloc_mutex);
    return h + 1;
}

void *topsync_rcl_calloc(topsync_rcl_runtime_t *rt, size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size) {
        ts_fail(ENOMEM, "topsync_rcl_calloc: %zu x %zu bytes overflows", count, size);
        errno = ENOMEM;
        return NULL;
    }
    void *p = topsync_rcl_malloc(rt, count * size);
    if (p)
        memset(p, 0, count * size);
    return p;
}

/* The header of a live block of runtime rt; aborts with a message on any
 * other pointer (free and realloc return no error). */
static struct ts_alloc_header *header_of(topsync_rcl_runtime_t *rt, void *block, const char *what)
{
    struct ts_alloc_header *h = (struct ts_alloc_header *)block - 1;
    if (h->magic != HEADER_MAGIC) {
        fprintf(stderr,
                "topsync: %s: %p was not allocated by topsync_rcl_malloc "
                "(or was freed already)\n",
                what, block);
        abort();
    }
    if (h->owner != rt) {
        fprintf(stderr, "topsync: %s: block %p belongs to runtime %p, not to runtime %p\n", what,
                block, (void *)h->owner, (void *)rt);
        abort();
    }
    return h;
}

void topsync_rcl_free(topsync_rcl_runtime_t *rt, void *block)
{
    if (!block)
        return;
    if (!rt) {
        fprintf(stderr, "topsync: topsync_rcl_free: NULL runtime\n");
        abort();
    }
    struct ts_alloc_header *h = header_of(rt, block, "topsync_rcl_free");
    pthread_mutex_lock(&rt->alloc_mutex);
    if (h->recorded)
        unlink_recorded(rt, h);
    rt->live_blocks--;
    pthread_mutex_unlock(&rt->alloc_mutex);
    h->magic = 0;
    if (h->kind == KIND_BOUND)
        hwloc_free(rt->topo->hwloc, h, h->mapped);
    else
        free(h);
}

void *topsync_rcl_realloc(topsync_rcl_runtime_t *rt, void *block, size_t size)
{
    if (!block)
        return topsync_rcl_malloc(rt, size);
    if (!size) {
        topsync_rcl_free(rt, block);
        return NULL;
    }
    struct ts_alloc_header *h = header_of(rt, block, "topsync_rcl_realloc");
    void *p = topsync_rcl_malloc(rt, size);
    if (!p)
        return NULL; /* the old block is left as it was */
    memcpy(p, block, h->size < size ? h->size : size);
    topsync_rcl_free(rt, block);
    return p;
}

int topsync_rcl_alloc_stats(topsync_rcl_runtime_t *rt, topsync_rcl_alloc_stats_t *out)
{
    if (!rt || !out)
        return ts_fail(EINVAL, "topsync_rcl_alloc_stats: NULL argument");
    pthread_mutex_lock(&rt->alloc_mutex);
    *out = rt->stats;
    /* relaxed: under alloc_mutex, which its writer holds too */
    out->memory_node = atomic_load_explicit(&rt->memory_node, memory_order_relaxed);
    pthread_mutex_unlock(&rt->alloc_mutex);
    return 0;
}
