/* topsync-bench rcl: the lock peers and the driver's entry point. */
#ifndef TOPSYNC_BENCH_RCL_H
#define TOPSYNC_BENCH_RCL_H

#include <topsync.h>

typedef void *(*rcl_bench_cs_t)(void *ctx);

/* A lock the critical section runs under, as RCL runs it on its server. */
typedef struct rcl_bench_peer {
    const char *name; /* "peer:mutex", ... */
    void *(*create)(unsigned nthreads, const topsync_topology_t *topology);
    void *(*run)(void *lock, unsigned tid, rcl_bench_cs_t cs, void *ctx);
    void (*destroy)(void *lock);
    int spin_only; /* never yields: run only with one thread per CPU */
} rcl_bench_peer;

int rcl_bench_peers(const rcl_bench_peer **out);

int cmd_rcl(int argc, char **argv);

#endif
