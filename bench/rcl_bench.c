#define _GNU_SOURCE
/*
 * topsync-bench rcl: the RCL papers' protocol (design.md section 5.4).
 *
 * An array of b integers; p worker threads perform n increments in all
 * (n / p each), each inside a critical section; the critical section moves
 * a shared cursor by the access pattern (sequential: next element; strided:
 * + s; random: xorshift) and increments the element under it. Throughput is
 * n / t, in Mops/s, the median of --runs runs. The array is initialised by
 * the main thread (first touch) before the lock starts, so that
 * RCLAwareMalloc's migration has something to do. Every run checks that the
 * array holds exactly n increments.
 *
 * Configurations: the RCL lock with default or RCL-aware allocation, the
 * server on a named core (init default, RCLLockInitDefault) or placed by
 * RCLLockInitNUMA (init numa), workers unpinned (affinity none) or pinned
 * by RCLHierarchicalAffinity (affinity hierarchical; the peers' threads are
 * then pinned compactly, core i mod cores); and the peers of peer_locks.c.
 *
 * Also the floor of any lock that moves data between cores: the round trip
 * of one cache line between two cores, against RCL's single-client
 * round trip (an empty critical section), both measured here.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cli_output.h"
#include "bench_rcl.h"

/* The first line of --csv, also how an earlier --csv file is recognised. */
#define CSV_HEADER "lock,pattern,threads,alloc,init,affinity,mops"

enum pattern { SEQUENTIAL, STRIDED, RANDOM, NPATTERNS };
static const char *const pattern_names[] = {"sequential", "strided", "random"};

struct cs_ctx {
    int *array;
    size_t size, pos, stride;
    uint64_t rng;
    enum pattern pattern;
};

static void *cs_increment(void *p)
{
    struct cs_ctx *c = p;
    switch (c->pattern) {
    case SEQUENTIAL:
        if (++c->pos == c->size)
            c->pos = 0;
        break;
    case STRIDED:
        c->pos += c->stride;
        if (c->pos >= c->size)
            c->pos -= c->size;
        break;
    default:
        c->rng ^= c->rng << 13;
        c->rng ^= c->rng >> 7;
        c->rng ^= c->rng << 17;
        c->pos = (size_t)(c->rng % c->size);
        break;
    }
    c->array[c->pos]++;
    return NULL;
}

static void *cs_empty(void *p)
{
    return p;
}

struct options {
    unsigned threads[16], nthreads;
    unsigned runs;
    size_t array, ops, stride;
    int patterns[NPATTERNS];
    int alloc[2], init[2], affinity[2]; /* [0] default/none, [1] rcl-aware/numa/hierarchical */
    char locks[512];
    int server_core;
    topsync_rcl_policy_t placement;
    int json;
    const char *output, *csv;
};

struct record {
    char lock[32];
    enum pattern pattern;
    unsigned threads;
    int alloc_aware, init_numa, affinity;
    double mops, runs[BENCH_MAX_RUNS];
    unsigned nruns;
};

/* ---- workers --------------------------------------------------------------- */

struct run_shared {
    atomic_int go;
    atomic_int ready;
    struct cs_ctx *ctx;
    size_t ops_per_thread;
    topsync_rcl_lock_t *rcl; /* or: */
    const rcl_bench_peer *peer;
    void *peer_lock;
    const topsync_topology_t *topo;
    int pin_compact;
};

struct worker {
    struct run_shared *sh;
    unsigned tid;
};

static void wait_for_go(struct run_shared *sh)
{
    atomic_fetch_add_explicit(&sh->ready, 1, memory_order_relaxed);
    while (!atomic_load_explicit(&sh->go, memory_order_acquire))
        sched_yield();
}

static void *worker_main(void *p)
{
    struct worker *w = p;
    struct run_shared *sh = w->sh;
    if (sh->pin_compact) {
        hwloc_topology_t h = topsync_topology_hwloc(sh->topo);
        unsigned ncores = topsync_topology_ncores(sh->topo);
        hwloc_obj_t core = hwloc_get_obj_by_type(h, HWLOC_OBJ_CORE, w->tid % ncores);
        if (core)
            hwloc_set_cpubind(h, core->cpuset, HWLOC_CPUBIND_THREAD);
    }
    wait_for_go(sh);
    if (sh->rcl)
        for (size_t i = 0; i < sh->ops_per_thread; i++)
            topsync_rcl_execute(sh->rcl, cs_increment, sh->ctx);
    else
        for (size_t i = 0; i < sh->ops_per_thread; i++)
            sh->peer->run(sh->peer_lock, w->tid, cs_increment, sh->ctx);
    return NULL;
}

/* Start the workers, time them, join them: seconds, or -1. */
static double drive(struct run_shared *sh, unsigned nthreads, topsync_rcl_runtime_t *rt_pin)
{
    pthread_t tids[256];
    struct worker ws[256];
    for (unsigned i = 0; i < nthreads; i++) {
        ws[i] = (struct worker){sh, i};
        int rc = rt_pin ? topsync_rcl_thread_create(rt_pin, &tids[i], NULL, worker_main, &ws[i])
                        : pthread_create(&tids[i], NULL, worker_main, &ws[i]);
        if (rc) {
            fprintf(stderr, "topsync-bench: cannot start worker: %s\n",
                    rt_pin ? topsync_error_message() : strerror(rc));
            atomic_store(&sh->go, 1);
            for (unsigned k = 0; k < i; k++)
                pthread_join(tids[k], NULL);
            return -1;
        }
    }
    while (atomic_load_explicit(&sh->ready, memory_order_relaxed) < (int)nthreads)
        sched_yield();
    uint64_t t0 = ts_monotonic_ns();
    atomic_store_explicit(&sh->go, 1, memory_order_release);
    for (unsigned i = 0; i < nthreads; i++)
        pthread_join(tids[i], NULL);
    return (double)(ts_monotonic_ns() - t0) * 1e-9;
}

static int check_array(const int *a, size_t size, size_t expected)
{
    size_t sum = 0;
    for (size_t i = 0; i < size; i++)
        sum += (size_t)a[i];
    if (sum != expected) {
        fprintf(stderr, "topsync-bench: WRONG RESULT: %zu increments counted, %zu made\n", sum,
                expected);
        return -1;
    }
    return 0;
}

/* One run of one configuration: Mops/s, or -1. */
static double run_once(const struct options *o, const struct record *cfg,
                       const rcl_bench_peer *peer, const topsync_topology_t *topo)
{
    size_t per = o->ops / cfg->threads, total = per * cfg->threads;
    topsync_rcl_runtime_t *rt = NULL;
    topsync_rcl_server_t *server = NULL;
    struct run_shared sh = {.ops_per_thread = per, .topo = topo};
    atomic_init(&sh.go, 0);
    atomic_init(&sh.ready, 0);
    struct cs_ctx ctx = {.size = o->array,
                         .stride = o->stride,
                         .rng = 0x9e3779b97f4a7c15ull,
                         .pattern = cfg->pattern};
    double mops = -1;
    if (!peer) {
        topsync_rcl_options_t ro;
        topsync_rcl_options_init(&ro);
        ro.placement = o->placement;
        if (topsync_rcl_runtime_create(&rt, &ro) < 0) {
            fprintf(stderr, "topsync-bench: %s\n", topsync_error_message());
            return -1;
        }
    }
    ctx.array = cfg->alloc_aware ? topsync_rcl_malloc(rt, o->array * sizeof(int))
                                 : malloc(o->array * sizeof(int));
    if (!ctx.array) {
        fprintf(stderr, "topsync-bench: cannot allocate %zu integers\n", o->array);
        goto out;
    }
    memset(ctx.array, 0, o->array * sizeof(int)); /* first touch: the main thread */
    sh.ctx = &ctx;
    if (!peer) {
        if (topsync_rcl_server_start(rt, cfg->init_numa ? TOPSYNC_RCL_CORE_AUTO : o->server_core,
                                     &server) < 0 ||
            topsync_rcl_lock_create(server, &sh.rcl) < 0) {
            fprintf(stderr, "topsync-bench: %s\n", topsync_error_message());
            goto out;
        }
    } else {
        sh.peer = peer;
        sh.pin_compact = cfg->affinity;
        if (!(sh.peer_lock = peer->create(cfg->threads, topo))) {
            fprintf(stderr, "topsync-bench: cannot create %s\n", peer->name);
            goto out;
        }
    }
    double secs = drive(&sh, cfg->threads, !peer && cfg->affinity ? rt : NULL);
    if (secs > 0 && check_array(ctx.array, o->array, total) == 0)
        mops = (double)total / secs * 1e-6;
out:
    if (sh.rcl)
        topsync_rcl_lock_destroy(sh.rcl);
    if (server)
        topsync_rcl_server_stop(server);
    if (sh.peer_lock)
        peer->destroy(sh.peer_lock);
    if (cfg->alloc_aware)
        topsync_rcl_free(rt, ctx.array);
    else
        free(ctx.array);
    if (rt && topsync_rcl_runtime_destroy(rt) < 0)
        fprintf(stderr, "topsync-bench: %s\n", topsync_error_message());
    return mops;
}

/* ---- round trips ------------------------------------------------------------ */

#define ROUNDTRIPS 20000u

/* One cache line bounced between two cores: the initiator stores an odd
 * value, the responder answers with the next even one, in the same word,
 * as an RCL request and its completion share one line. */
struct pingpong {
    _Alignas(128) atomic_uint word;
    hwloc_topology_t h;
    hwloc_obj_t peer_core;
};

static void *pong_main(void *p)
{
    struct pingpong *pp = p;
    hwloc_set_cpubind(pp->h, pp->peer_core->cpuset, HWLOC_CPUBIND_THREAD);
    for (unsigned i = 1; i <= ROUNDTRIPS; i++) {
        while (atomic_load_explicit(&pp->word, memory_order_acquire) != 2 * i - 1)
            ;
        atomic_store_explicit(&pp->word, 2 * i, memory_order_release);
    }
    return NULL;
}

/* Cache-line round trip between cores a and b, ns. */
static double c2c_roundtrip(hwloc_topology_t h, hwloc_obj_t a, hwloc_obj_t b)
{
    struct pingpong pp = {.h = h, .peer_core = b};
    atomic_init(&pp.word, 0);
    hwloc_set_cpubind(h, a->cpuset, HWLOC_CPUBIND_THREAD);
    pthread_t t;
    pthread_create(&t, NULL, pong_main, &pp);
    uint64_t t0 = 0;
    for (unsigned i = 1; i <= ROUNDTRIPS; i++) {
        if (i == ROUNDTRIPS / 10)
            t0 = ts_monotonic_ns(); /* the first tenth warms up */
        atomic_store_explicit(&pp.word, 2 * i - 1, memory_order_release);
        while (atomic_load_explicit(&pp.word, memory_order_acquire) != 2 * i)
            ;
    }
    double ns = (double)(ts_monotonic_ns() - t0) / (ROUNDTRIPS - ROUNDTRIPS / 10 + 1);
    pthread_join(t, NULL);
    /* unpin: a runtime created next must see the whole process's cpuset */
    hwloc_set_cpubind(h, hwloc_topology_get_allowed_cpuset(h), HWLOC_CPUBIND_THREAD);
    return ns;
}

/* RCL single-client round trip (empty critical section): client on core a,
 * server on core b, ns. */
static double rcl_roundtrip(hwloc_topology_t h, hwloc_obj_t a, int server_core)
{
    topsync_rcl_runtime_t *rt;
    topsync_rcl_server_t *s;
    topsync_rcl_lock_t *l;
    topsync_rcl_options_t o;
    topsync_rcl_options_init(&o);
    o.wait = TOPSYNC_WAIT_BLOCK;
    if (topsync_rcl_runtime_create(&rt, &o) < 0)
        return -1;
    if (topsync_rcl_server_start(rt, server_core, &s) < 0 || topsync_rcl_lock_create(s, &l) < 0) {
        fprintf(stderr, "topsync-bench: %s\n", topsync_error_message());
        return -1;
    }
    hwloc_set_cpubind(h, a->cpuset, HWLOC_CPUBIND_THREAD);
    uint64_t t0 = 0;
    for (unsigned i = 1; i <= ROUNDTRIPS; i++) {
        if (i == ROUNDTRIPS / 10)
            t0 = ts_monotonic_ns();
        topsync_rcl_execute(l, cs_empty, NULL);
    }
    double ns = (double)(ts_monotonic_ns() - t0) / (ROUNDTRIPS - ROUNDTRIPS / 10 + 1);
    topsync_rcl_lock_destroy(l);
    topsync_rcl_server_stop(s);
    topsync_rcl_runtime_destroy(rt);
    hwloc_set_cpubind(h, hwloc_topology_get_allowed_cpuset(h), HWLOC_CPUBIND_THREAD);
    return ns;
}

/* ---- options and output ------------------------------------------------------ */

static void usage(FILE *f)
{
    fprintf(f, "usage: topsync-bench rcl [--threads LIST] [--array B] [--ops N] [--runs R]\n"
               "                         [--pattern LIST] [--stride S] [--locks LIST]\n"
               "                         [--alloc LIST] [--init LIST] [--affinity LIST]\n"
               "                         [--server-core C] [--placement pack|spread]\n"
               "                         [--json] [--output FILE.json] [--csv FILE.csv]\n"
               "  LIST is comma-separated. Defaults: --threads 1,2,4 --array 16777216\n"
               "  --ops 200000 --runs 3 --pattern sequential,strided,random --stride 20\n"
               "  --locks rcl,peer:mutex,peer:ttas,peer:ck-mcs,peer:ck-cohort,peer:flat-combining\n"
               "  --alloc default,rcl-aware --init default,numa --affinity none,hierarchical\n"
               "  --server-core: the last core (init default) --placement pack\n");
}

/* Parse a comma list of names among `valid` into flags; -1 with a message. */
static int parse_names(const char *what, const char *list, const char *const *valid, int nvalid,
                       int *flags)
{
    memset(flags, 0, (size_t)nvalid * sizeof *flags);
    char *copy = strdup(list), *save = NULL;
    int rc = 0;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int k = 0;
        while (k < nvalid && strcmp(t, valid[k]))
            k++;
        if (k == nvalid) {
            fprintf(stderr, "topsync-bench: unknown %s '%s'; valid:", what, t);
            for (int i = 0; i < nvalid; i++)
                fprintf(stderr, "%s %s", i ? "," : "", valid[i]);
            fprintf(stderr, "\n");
            rc = -1;
            break;
        }
        flags[k] = 1;
    }
    free(copy);
    return rc;
}

static int parse_size(const char *s, size_t *out, size_t min, size_t max)
{
    uint64_t v;
    if (bench_parse_u64(s, &v, min, max) < 0)
        return -1;
    *out = (size_t)v;
    return 0;
}

static const char *alloc_name(int aware)
{
    return aware ? "rcl-aware" : "default";
}
static const char *init_name(int numa)
{
    return numa ? "numa" : "default";
}
static const char *affinity_name(int a)
{
    return a ? "hierarchical" : "none";
}

static void print_json(FILE *f, const struct record *r, size_t n, double rcl_ns, double c2c_ns)
{
    fprintf(f, "[\n");
    for (size_t i = 0; i < n; i++)
        fprintf(f,
                "  {\"lock\": \"%s\", \"pattern\": \"%s\", \"threads\": %u, \"alloc\": \"%s\", "
                "\"init\": \"%s\", \"affinity\": \"%s\", \"mops\": %.4f},\n",
                r[i].lock, pattern_names[r[i].pattern], r[i].threads, alloc_name(r[i].alloc_aware),
                init_name(r[i].init_numa), affinity_name(r[i].affinity), r[i].mops);
    if (rcl_ns > 0 && c2c_ns > 0)
        fprintf(f, "  {\"metric\": \"roundtrip_ns\", \"rcl\": %.1f, \"c2c\": %.1f}\n", rcl_ns,
                c2c_ns);
    else
        fprintf(f, "  {\"metric\": \"roundtrip_ns\", \"rcl\": null, \"c2c\": null}\n");
    fprintf(f, "]\n");
}

int cmd_rcl(int argc, char **argv)
{
    struct options o = {.runs = 3,
                        .array = 1u << 24,
                        .ops = 200000,
                        .stride = 20,
                        .patterns = {1, 1, 1},
                        .alloc = {1, 1},
                        .init = {1, 1},
                        .affinity = {1, 1},
                        .server_core = -1,
                        .placement = TOPSYNC_RCL_PACK};
    o.threads[0] = 1, o.threads[1] = 2, o.threads[2] = 4, o.nthreads = 3;
    snprintf(o.locks, sizeof o.locks, "rcl");
    const rcl_bench_peer *peers;
    int npeers = rcl_bench_peers(&peers);
    for (int i = 0; i < npeers; i++)
        snprintf(o.locks + strlen(o.locks), sizeof o.locks - strlen(o.locks), ",%s", peers[i].name);
    enum {
        O_THREADS = 256,
        O_ARRAY,
        O_OPS,
        O_RUNS,
        O_PATTERN,
        O_STRIDE,
        O_LOCKS,
        O_ALLOC,
        O_INIT,
        O_AFFINITY,
        O_CORE,
        O_PLACEMENT,
        O_JSON,
        O_OUTPUT,
        O_CSV,
        O_HELP
    };
    static const struct option longopts[] = {{"threads", required_argument, 0, O_THREADS},
                                             {"array", required_argument, 0, O_ARRAY},
                                             {"ops", required_argument, 0, O_OPS},
                                             {"runs", required_argument, 0, O_RUNS},
                                             {"pattern", required_argument, 0, O_PATTERN},
                                             {"stride", required_argument, 0, O_STRIDE},
                                             {"locks", required_argument, 0, O_LOCKS},
                                             {"alloc", required_argument, 0, O_ALLOC},
                                             {"init", required_argument, 0, O_INIT},
                                             {"affinity", required_argument, 0, O_AFFINITY},
                                             {"server-core", required_argument, 0, O_CORE},
                                             {"placement", required_argument, 0, O_PLACEMENT},
                                             {"json", no_argument, 0, O_JSON},
                                             {"output", required_argument, 0, O_OUTPUT},
                                             {"csv", required_argument, 0, O_CSV},
                                             {"help", no_argument, 0, O_HELP},
                                             {0, 0, 0, 0}};
    static const char *const alloc_valid[] = {"default", "rcl-aware"};
    static const char *const init_valid[] = {"default", "numa"};
    static const char *const affinity_valid[] = {"none", "hierarchical"};
    int c;
    size_t v;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case O_THREADS: {
            if (bench_check_list("--threads", optarg) < 0)
                return 2;
            o.nthreads = 0;
            char *copy = strdup(optarg), *save = NULL;
            for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                if (o.nthreads == 16 || parse_size(t, &v, 1, 256) < 0) {
                    fprintf(stderr, "topsync-bench: --threads takes up to 16 counts of 1..256\n");
                    free(copy);
                    return 2;
                }
                o.threads[o.nthreads++] = (unsigned)v;
            }
            free(copy);
            if (!o.nthreads) {
                fprintf(stderr, "topsync-bench: --threads is empty\n");
                return 2;
            }
            break;
        }
        case O_ARRAY:
            if (parse_size(optarg, &o.array, 1, (size_t)1 << 34) < 0) {
                fprintf(stderr, "topsync-bench: --array takes 1 to 2^34 elements\n");
                return 2;
            }
            break;
        case O_OPS:
            if (parse_size(optarg, &o.ops, 1, (size_t)1 << 40) < 0) {
                fprintf(stderr, "topsync-bench: --ops takes a positive count\n");
                return 2;
            }
            break;
        case O_RUNS:
            if (parse_size(optarg, &v, 1, BENCH_MAX_RUNS) < 0) {
                fprintf(stderr, "topsync-bench: --runs takes 1 to %d\n", BENCH_MAX_RUNS);
                return 2;
            }
            o.runs = (unsigned)v;
            break;
        case O_PATTERN:
            if (bench_check_list("--pattern", optarg) < 0)
                return 2;
            if (parse_names("pattern", optarg, pattern_names, NPATTERNS, o.patterns) < 0)
                return 2;
            break;
        case O_STRIDE:
            if (parse_size(optarg, &o.stride, 1, (size_t)1 << 34) < 0) {
                fprintf(stderr, "topsync-bench: --stride takes a positive count\n");
                return 2;
            }
            break;
        case O_LOCKS: {
            if (bench_check_list("--locks", optarg) < 0)
                return 2;
            const char *valid[16] = {"rcl"};
            int flags[16];
            for (int i = 0; i < npeers; i++)
                valid[i + 1] = peers[i].name;
            if (parse_names("lock", optarg, valid, npeers + 1, flags) < 0)
                return 2;
            snprintf(o.locks, sizeof o.locks, "%s", optarg);
            break;
        }
        case O_ALLOC:
            if (bench_check_list("--alloc", optarg) < 0)
                return 2;
            if (parse_names("allocation", optarg, alloc_valid, 2, o.alloc) < 0)
                return 2;
            break;
        case O_INIT:
            if (bench_check_list("--init", optarg) < 0)
                return 2;
            if (parse_names("lock init", optarg, init_valid, 2, o.init) < 0)
                return 2;
            break;
        case O_AFFINITY:
            if (bench_check_list("--affinity", optarg) < 0)
                return 2;
            if (parse_names("affinity", optarg, affinity_valid, 2, o.affinity) < 0)
                return 2;
            break;
        case O_CORE:
            if (parse_size(optarg, &v, 0, 65535) < 0) {
                fprintf(stderr, "topsync-bench: --server-core takes a core index\n");
                return 2;
            }
            o.server_core = (int)v;
            break;
        case O_PLACEMENT:
            if (topsync_rcl_policy_parse(optarg, &o.placement) < 0) {
                fprintf(stderr, "topsync-bench: --placement: %s\n", topsync_error_message());
                return 2;
            }
            break;
        case O_JSON: o.json = 1; break;
        case O_OUTPUT: o.output = optarg; break;
        case O_CSV: o.csv = optarg; break;
        case O_HELP: usage(stdout); return 0;
        default: /* getopt named the option */
            fprintf(stderr, "Try 'topsync-bench rcl --help'.\n");
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "topsync-bench: unexpected argument '%s'; try 'topsync-bench rcl --help'\n",
                argv[optind]);
        return 2;
    }
    if (o.patterns[STRIDED] && o.stride >= o.array) {
        fprintf(stderr,
                "topsync-bench: --stride %zu must be smaller than --array %zu "
                "(the strided pattern steps through the array)\n",
                o.stride, o.array);
        return 2;
    }

    topsync_topology_t *topo;
    int loaded = bench_topology_load("topsync-bench", &topo);
    if (loaded)
        return loaded;
    hwloc_topology_t h = topsync_topology_hwloc(topo);
    unsigned ncores = topsync_topology_ncores(topo);
    int ncpus = hwloc_bitmap_weight(hwloc_topology_get_allowed_cpuset(h));
    if (o.server_core < 0)
        o.server_core = (int)ncores - 1;
    if ((unsigned)o.server_core >= ncores) {
        fprintf(stderr, "topsync-bench: --server-core %d: this machine has cores 0 to %u\n",
                o.server_core, ncores - 1);
        return 2;
    }

    if ((o.output && cli_output_check("topsync-bench", o.output, CLI_OUTPUT_JSON, NULL)) ||
        (o.csv && cli_output_check("topsync-bench", o.csv, CLI_OUTPUT_CSV, CSV_HEADER)))
        return 1;

    size_t cap = 1024, n = 0;
    struct record *recs = calloc(cap, sizeof *recs);
    char *lock_copy = strdup(o.locks), *save = NULL;
    for (char *name = strtok_r(lock_copy, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        const rcl_bench_peer *peer = NULL;
        for (int i = 0; i < npeers; i++)
            if (!strcmp(name, peers[i].name))
                peer = &peers[i];
        for (int pat = 0; pat < NPATTERNS; pat++) {
            if (!o.patterns[pat])
                continue;
            for (unsigned ti = 0; ti < o.nthreads; ti++) {
                unsigned threads = o.threads[ti];
                if (peer && peer->spin_only && (int)threads > ncpus) {
                    fprintf(stderr,
                            "topsync-bench: %s skipped with %u threads: it only spins, "
                            "and %d CPUs\n",
                            name, threads, ncpus);
                    continue;
                }
                for (int al = 0; al < 2; al++)
                    for (int in = 0; in < 2; in++)
                        for (int af = 0; af < 2; af++) {
                            if (!o.alloc[al] || !o.init[in] || !o.affinity[af])
                                continue;
                            if (peer && (al || in)) /* no server: no such configuration */
                                continue;
                            if (n == cap) {
                                cap *= 2;
                                recs = realloc(recs, cap * sizeof *recs);
                            }
                            struct record *r = &recs[n];
                            memset(r, 0, sizeof *r);
                            snprintf(r->lock, sizeof r->lock, "%s", name);
                            r->pattern = (enum pattern)pat;
                            r->threads = threads;
                            r->alloc_aware = al;
                            r->init_numa = in;
                            r->affinity = af;
                            for (unsigned k = 0; k < o.runs; k++) {
                                double m = run_once(&o, r, peer, topo);
                                if (m < 0) {
                                    /* the message is out; a table of what
                                     * ran would read as a complete result */
                                    free(lock_copy);
                                    free(recs);
                                    topsync_topology_destroy(topo);
                                    return 1;
                                }
                                r->runs[r->nruns++] = m;
                            }
                            if (r->nruns) {
                                r->mops = bench_median(r->runs, r->nruns);
                                n++;
                            }
                        }
            }
        }
    }
    free(lock_copy);

    double rcl_ns = -1, c2c_ns = -1;
    if (ncores >= 2) {
        hwloc_obj_t a = hwloc_get_obj_by_type(h, HWLOC_OBJ_CORE, 0);
        hwloc_obj_t b = hwloc_get_obj_by_type(h, HWLOC_OBJ_CORE, ncores - 1);
        double rt_runs[BENCH_MAX_RUNS], cc_runs[BENCH_MAX_RUNS];
        for (unsigned k = 0; k < o.runs; k++) {
            cc_runs[k] = c2c_roundtrip(h, a, b);
            rt_runs[k] = rcl_roundtrip(h, a, (int)ncores - 1);
        }
        hwloc_set_cpubind(h, hwloc_topology_get_allowed_cpuset(h), HWLOC_CPUBIND_THREAD);
        c2c_ns = bench_median(cc_runs, o.runs);
        rcl_ns = bench_median(rt_runs, o.runs);
    }

    if (o.output) {
        cli_output_t out;
        if (cli_output_open(&out, "topsync-bench", o.output, CLI_OUTPUT_JSON, NULL))
            return 1;
        print_json(out.f, recs, n, rcl_ns, c2c_ns);
        if (cli_output_close(&out))
            return 1;
    }
    if (o.csv) {
        cli_output_t out;
        if (cli_output_open(&out, "topsync-bench", o.csv, CLI_OUTPUT_CSV, CSV_HEADER))
            return 1;
        fprintf(out.f, "%s\n", CSV_HEADER);
        for (size_t i = 0; i < n; i++)
            fprintf(out.f, "%s,%s,%u,%s,%s,%s,%.4f\n", recs[i].lock, pattern_names[recs[i].pattern],
                    recs[i].threads, alloc_name(recs[i].alloc_aware), init_name(recs[i].init_numa),
                    affinity_name(recs[i].affinity), recs[i].mops);
        if (cli_output_close(&out))
            return 1;
    }
    if (o.json) {
        print_json(stdout, recs, n, rcl_ns, c2c_ns);
    } else {
        printf("RCL protocol (design.md section 5.4): %zu increments of an array of %zu integers, "
               "%u cores,\n"
               "median of %u runs, Mops/s\n\n",
               o.ops, o.array, ncores, o.runs);
        printf("  %-20s %-10s %7s %-9s %-7s %-12s %10s\n", "lock", "pattern", "threads", "alloc",
               "init", "affinity", "Mops/s");
        for (size_t i = 0; i < n; i++)
            printf("  %-20s %-10s %7u %-9s %-7s %-12s %10.3f\n", recs[i].lock,
                   pattern_names[recs[i].pattern], recs[i].threads, alloc_name(recs[i].alloc_aware),
                   init_name(recs[i].init_numa), affinity_name(recs[i].affinity), recs[i].mops);
        if (rcl_ns > 0)
            printf("\nround trip, one client, empty critical section: RCL %.1f ns; cache line "
                   "core 0 <-> core %u: %.1f ns (%.2fx the floor)\n",
                   rcl_ns, ncores - 1, c2c_ns, rcl_ns / c2c_ns);
    }
    free(recs);
    topsync_topology_destroy(topo);
    return 0;
}
