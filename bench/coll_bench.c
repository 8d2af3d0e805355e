/*
 * topsync-bench allreduce|reduce|bcast: the collectives' latency per
 * message size, for threads or processes, beside topsync's own barrier on
 * the same groups (the data rides on the barrier's lines: how much it
 * costs on top of it) and, for threads, an OpenMP allreduce made of two
 * omp barriers (what an OpenMP program writes). The paper's protocol (design.md section 4):
 * R runs of I timed calls after a warm-up, the max over participants of
 * the mean per call, summarized over runs. The MPI side is
 * scripts/coll_compare.sh (preloaded against the MPI's own).
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "bench.h"
#include "coll_bench.h"

enum coll_op { OP_ALLREDUCE, OP_REDUCE, OP_BCAST, OP_BARRIER, OP_OMP };
static const char *const op_names[] = {"allreduce", "reduce", "bcast", "barrier", "peer:omp"};

struct plan {
    enum coll_op op;
    size_t bytes;
    unsigned n;
    uint64_t warmup, iterations;
    bool processes;
    bench_binding *binding;
    topsync_coll_t *coll;
    topsync_barrier_t *barrier;
    double *per_rank; /* n means, ns */
};

/* One participant's timed loop: 8-byte and larger sizes are doubles
 * summed, 4 bytes an int32 sum; bcast from participant 0. */
static void participant(struct plan *p, unsigned rank)
{
    unsigned char send[TOPSYNC_COLL_MAX_BYTES_LIMIT > 65536 ? 65536 : 1], recv[65536];
    size_t count = p->bytes >= 8 ? p->bytes / 8 : 1;
    topsync_datatype_t type = p->bytes >= 8 ? TOPSYNC_TYPE_DOUBLE : TOPSYNC_TYPE_INT32;
    memset(send, 0, sizeof send);
    for (size_t i = 0; i < count && p->bytes >= 8; i++)
        ((double *)(void *)send)[i] = rank + i * 0.5;
    uint64_t t0 = 0;
    for (uint64_t k = 0; k < p->warmup + p->iterations; k++) {
        if (k == p->warmup)
            t0 = ts_monotonic_ns();
        switch (p->op) {
        case OP_ALLREDUCE:
            topsync_allreduce(p->coll, rank, send, recv, count, type, TOPSYNC_OP_SUM);
            break;
        case OP_REDUCE:
            topsync_reduce(p->coll, rank, send, recv, count, type, TOPSYNC_OP_SUM, 0);
            break;
        case OP_BCAST: topsync_bcast(p->coll, rank, rank ? recv : send, p->bytes, 0); break;
        default: topsync_barrier_wait(p->barrier, rank); break;
        }
    }
    p->per_rank[rank] = (double)(ts_monotonic_ns() - t0) / (double)p->iterations;
}

struct worker {
    struct plan *p;
    unsigned rank;
};

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    bench_bind_rank(w->rank, w->p->binding);
    participant(w->p, w->rank);
    return NULL;
}

#ifdef _OPENMP
/* What an OpenMP program writes for an allreduce of a small array: every
 * thread puts its contribution in a shared row, a barrier, every thread
 * sums the rows for itself, a barrier before the rows are reused. (An
 * array-section reduction clause crashed libgomp 12 here when the size
 * changed between parallel regions.) */
static void omp_run(struct plan *p)
{
    size_t count = p->bytes >= 8 ? p->bytes / 8 : 1;
    double *rows = calloc((size_t)p->n * count, sizeof *rows);
    omp_set_dynamic(0);
#pragma omp parallel num_threads(p->n)
    {
        unsigned rank = (unsigned)omp_get_thread_num();
        bench_bind_rank(rank, p->binding);
        double *mine = calloc(count, sizeof *mine), *out = calloc(count, sizeof *out);
        for (size_t i = 0; i < count; i++)
            mine[i] = rank + i * 0.5;
        uint64_t t0 = 0;
        for (uint64_t k = 0; k < p->warmup + p->iterations; k++) {
            if (k == p->warmup)
                t0 = ts_monotonic_ns();
            memcpy(rows + rank * count, mine, count * sizeof *mine);
#pragma omp barrier
            for (size_t i = 0; i < count; i++) {
                double sum = 0;
                for (unsigned t = 0; t < p->n; t++)
                    sum += rows[t * count + i];
                out[i] = sum;
            }
#pragma omp barrier
        }
        p->per_rank[rank] = (double)(ts_monotonic_ns() - t0) / (double)p->iterations + out[0] * 0;
        free(mine);
        free(out);
    }
    free(rows);
}
#endif

/* One run: the max over participants of the mean ns per call; -1 on failure. */
static double run_once(struct plan *p)
{
    if (p->op == OP_OMP) {
#ifdef _OPENMP
        omp_run(p);
#else
        return -1;
#endif
    } else if (!p->processes) {
        pthread_t *tids = calloc(p->n, sizeof *tids);
        struct worker *ws = calloc(p->n, sizeof *ws);
        for (unsigned r = 0; r < p->n; r++) {
            ws[r] = (struct worker){p, r};
            pthread_create(&tids[r], NULL, worker_main, &ws[r]);
        }
        for (unsigned r = 0; r < p->n; r++)
            pthread_join(tids[r], NULL);
        free(tids);
        free(ws);
    } else {
        pid_t *pids = calloc(p->n, sizeof *pids);
        bool failed = false;
        fflush(NULL);
        for (unsigned r = 0; r < p->n; r++) {
            pids[r] = fork();
            if (pids[r] == 0) {
                if (p->binding->sets && p->binding->sets[r])
                    hwloc_set_cpubind(topsync_topology_hwloc(p->binding->topo), p->binding->sets[r],
                                      HWLOC_CPUBIND_PROCESS);
                participant(p, r);
                _exit(0);
            }
            if (pids[r] < 0) {
                failed = true;
                for (unsigned q = 0; q < r; q++)
                    kill(pids[q], SIGKILL);
                p->n = r;
                break;
            }
        }
        for (unsigned r = 0; r < p->n; r++) {
            int status = 0;
            failed |=
                waitpid(pids[r], &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0;
        }
        free(pids);
        if (failed)
            return -1;
    }
    double worst = 0;
    for (unsigned r = 0; r < p->n; r++)
        worst = p->per_rank[r] > worst ? p->per_rank[r] : worst;
    return worst;
}

static void usage(FILE *f, const char *op)
{
    fprintf(f,
            "usage: topsync-bench %s --threads N|--processes N [--sizes LIST]\n"
            "           [--iterations I] [--runs R] [--bind core|none] [--noise N] [--json]\n"
            "  Latency of topsync_%s per message size (bytes, 4 to the limit;\n"
            "  default 4,8,64,1024,2048), beside topsync's own barrier on the same\n"
            "  groups and, for allreduce with threads, an OpenMP allreduce of two barriers.\n"
            "  --bind core (default) binds participant i to core i; none leaves them\n"
            "  unbound; --noise N runs N busy neighbour processes meanwhile.\n"
            "  The MPI side: scripts/coll_compare.sh (preloaded against the MPI's own).\n",
            op, op);
}

int bench_coll_main(int argc, char **argv)
{
    const char *opname = argv[0];
    enum coll_op op = !strcmp(opname, "allreduce") ? OP_ALLREDUCE
                      : !strcmp(opname, "reduce")  ? OP_REDUCE
                                                   : OP_BCAST;
    uint64_t n = 0, iterations = 20000, runs = 5, noise = 0;
    bool processes = false, bound = true, json = false;
    const char *sizes = "4,8,64,1024,2048";
    enum { O_THREADS = 256, O_PROCS, O_SIZES, O_ITER, O_RUNS, O_BIND, O_NOISE, O_JSON, O_HELP };
    static const struct option longopts[] = {{"threads", required_argument, 0, O_THREADS},
                                             {"processes", required_argument, 0, O_PROCS},
                                             {"sizes", required_argument, 0, O_SIZES},
                                             {"iterations", required_argument, 0, O_ITER},
                                             {"runs", required_argument, 0, O_RUNS},
                                             {"bind", required_argument, 0, O_BIND},
                                             {"noise", required_argument, 0, O_NOISE},
                                             {"json", no_argument, 0, O_JSON},
                                             {"help", no_argument, 0, O_HELP},
                                             {0, 0, 0, 0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case O_PROCS: processes = true; /* fall through */
        case O_THREADS:
            if (bench_parse_u64(optarg, &n, 1, 4096)) {
                fprintf(stderr, "topsync-bench: --threads/--processes take 1 to 4096, not '%s'\n",
                        optarg);
                return 2;
            }
            break;
        case O_SIZES:
            if (bench_check_list("--sizes", optarg))
                return 2;
            sizes = optarg;
            break;
        case O_ITER:
            if (bench_parse_u64(optarg, &iterations, 1, UINT64_MAX / 4)) {
                fprintf(stderr, "topsync-bench: --iterations takes a positive number, not '%s'\n",
                        optarg);
                return 2;
            }
            break;
        case O_RUNS:
            if (bench_parse_u64(optarg, &runs, 1, BENCH_MAX_RUNS)) {
                fprintf(stderr, "topsync-bench: --runs takes 1 to %d, not '%s'\n", BENCH_MAX_RUNS,
                        optarg);
                return 2;
            }
            break;
        case O_BIND:
            if (strcmp(optarg, "core") && strcmp(optarg, "none")) {
                fprintf(stderr, "topsync-bench: --bind '%s' is not valid; valid: core, none\n",
                        optarg);
                return 2;
            }
            bound = !strcmp(optarg, "core");
            break;
        case O_NOISE:
            if (bench_parse_u64(optarg, &noise, 0, 1024)) {
                fprintf(stderr, "topsync-bench: --noise takes 0 to 1024, not '%s'\n", optarg);
                return 2;
            }
            break;
        case O_JSON: json = true; break;
        case 'h':
        case O_HELP: usage(stdout, opname); return 0;
        default: fprintf(stderr, "Try 'topsync-bench %s --help'.\n", opname); return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "topsync-bench: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    if (!n) {
        fprintf(stderr, "topsync-bench %s: --threads N or --processes N is required\n", opname);
        return 2;
    }
    /* the sizes, checked against the default limit before anything runs */
    size_t list[64];
    unsigned nsizes = 0;
    for (const char *s = sizes; *s && nsizes < 64;) {
        char word[32];
        size_t len = strcspn(s, ",");
        snprintf(word, sizeof word, "%.*s", (int)(len < 31 ? len : 31), s);
        uint64_t v;
        if (bench_parse_u64(word, &v, 4, 65536)) {
            fprintf(stderr, "topsync-bench: --sizes takes byte counts from 4 to 65536, not '%s'\n",
                    word);
            return 2;
        }
        list[nsizes++] = (size_t)v;
        s += len + (s[len] == ',');
    }

    bench_binding binding = {NULL, NULL, (unsigned)n};
    if (bench_topology_load("topsync-bench", &binding.topo))
        return 1;
    hwloc_bitmap_t *sets = calloc(n, sizeof *sets);
    if (bound && topsync_placement_compute(binding.topo, (unsigned)n, TOPSYNC_MAP_BY_CORE,
                                           TOPSYNC_BIND_TO_CORE, sets) == 0)
        binding.sets = sets;
    if (noise && bench_noise_start((unsigned)noise) < 0)
        return 1;

    size_t shared_bytes = ((size_t)n * sizeof(double) + 4095) / 4096 * 4096;
    double *per_rank =
        mmap(NULL, shared_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    char protocol[128];
    bench_protocol_words((unsigned)runs, protocol, sizeof protocol);
    protocol[strcspn(protocol, ";")] = '\0'; /* no median column here */
    if (!json)
        printf("# topsync-bench %s: %s %" PRIu64 ", %s, noise %" PRIu64
               "; ns per call, %s of %" PRIu64 " calls\n",
               opname, processes ? "processes" : "threads", n, bound ? "bound to cores" : "unbound",
               noise, protocol, iterations);
    else
        printf("[");
    int status = 0;
    bool first = true;
    for (unsigned si = 0; si < nsizes; si++) {
        enum coll_op rows[] = {op, OP_BARRIER, OP_OMP};
        unsigned nrows = op == OP_ALLREDUCE && !processes ? 3 : 2;
        for (unsigned ri = 0; ri < nrows; ri++) {
            struct plan p = {rows[ri],   list[si],  (unsigned)n, iterations / 10 + 1,
                             iterations, processes, &binding,    NULL,
                             NULL,       per_rank};
            topsync_coll_options_t o;
            topsync_coll_options_init(&o);
            o.barrier.topology = binding.topo;
            o.barrier.cpusets = (const hwloc_const_bitmap_t *)binding.sets;
            o.barrier.process_shared = processes;
            o.max_bytes = list[si] > TOPSYNC_COLL_MAX_BYTES_DEFAULT ? list[si] : 0;
            if (p.op != OP_OMP && topsync_coll_create(&p.coll, (unsigned)n, &o) < 0) {
                fprintf(stderr, "topsync-bench: %s\n", topsync_error_message());
                status = 1;
                goto out;
            }
            if (p.coll)
                p.barrier = topsync_coll_barrier(p.coll);
            double results[BENCH_MAX_RUNS];
            bool ok = true;
            for (unsigned r = 0; r < runs && ok; r++)
                ok = (results[r] = run_once(&p)) >= 0;
            const char *impl = p.op == OP_OMP ? "peer:omp-barriers" : op_names[p.op];
            char resolved[96] = "";
            if (p.barrier)
                snprintf(resolved, sizeof resolved, "%s/%s", topsync_barrier_algorithm(p.barrier),
                         topsync_barrier_wait_policy_name(p.barrier));
            topsync_coll_destroy(p.coll);
            if (!ok) {
                if (p.op == OP_OMP)
                    continue; /* no OpenMP in this build */
                fprintf(stderr, "topsync-bench: a participant failed\n");
                status = 1;
                goto out;
            }
            double ns = bench_protocol_summary(results, (unsigned)runs);
            if (json) {
                printf("%s\n {\"op\": \"%s\", \"impl\": \"%s\", \"bytes\": %zu, \"n\": %" PRIu64
                       ", \"processes\": %s, \"bound\": %s, \"noise\": %" PRIu64
                       ", \"algorithm\": \"%s\", \"ns\": %.1f, \"runs\": [",
                       first ? "" : ",", opname, impl, list[si], n, processes ? "true" : "false",
                       bound ? "true" : "false", noise, resolved, ns);
                for (unsigned r = 0; r < runs; r++)
                    printf("%s%.1f", r ? ", " : "", results[r]);
                printf("]}");
            } else {
                printf("%6zu B  %-20s %10.1f ns  %s\n", list[si], impl, ns, resolved);
            }
            first = false;
            fflush(stdout);
        }
    }
    if (json)
        printf("\n]\n");
out:
    bench_noise_stop();
    munmap(per_rank, shared_bytes);
    for (unsigned i = 0; i < n; i++)
        if (sets[i])
            hwloc_bitmap_free(sets[i]);
    free(sets);
    topsync_topology_destroy(binding.topo);
    return status;
}
