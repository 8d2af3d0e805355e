/*
 * topsync-bench: benchmarks that follow the papers' protocols and run the
 * peers in the same process.
 * The why: docs/design.md section 8.25.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include <topsync.h>

#include "bench.h"
#include "coll_bench.h"
#include "cli_output.h"
#include "bench_rcl.h"

#define MAX_RUNS BENCH_MAX_RUNS

/* ---------------------------------------------------------------------- */
/* topsync and pthread as bench_barrier.                                    */

static void *pthread_create_fn(unsigned n, const void *arg)
{
    (void)arg;
    pthread_barrier_t *b = malloc(sizeof *b);
    if (b && pthread_barrier_init(b, NULL, n) != 0) {
        free(b);
        return NULL;
    }
    return b;
}
static void pthread_wait_fn(void *s, unsigned r)
{
    (void)r;
    pthread_barrier_wait(s);
}
static void pthread_destroy_fn(void *s)
{
    pthread_barrier_destroy(s);
    free(s);
}

struct result {
    char name[64];
    char resolved[64];
    const char *wait;
    double latency_ns;
    uint64_t iterations;
    double runs[MAX_RUNS];
    unsigned nruns;
    int failed;
    double paired_vs_pthread; /* median of runs[r] / glibc's runs[r]; 0: none */
    bool topsync;             /* a topsync barrier: its switches are reported */
    uint64_t switches;        /* of configuration, over its runs (reactive barriers) */
};

struct options {
    unsigned threads, runs; /* threads: the participants, threads or processes */
    int processes;          /* forked processes instead of threads */
    int unbound;            /* --bind none */
    unsigned noise;         /* --noise N: busy neighbour processes */
    uint64_t iterations, budget_ms;
    uint64_t run_ms; /* 0, or each timed run lasts at least this long */
    const char *algorithm;
    topsync_wait_policy_t wait;
    int json;
    unsigned peers;     /* PEER_* bits (--peers) */
    const char *output; /* also write the JSON records here */
};

/* The peers --peers selects. */
enum { PEER_PTHREAD = 1, PEER_OMP = 2, PEER_CK = 4, PEER_PROGRAM = 8, PEER_ALL = 15 };

/* "all" | "none" | a comma-separated list of pthread, omp, ck, program;
 * -1 with *bad, *bad_len the element not known. */
static int parse_peers(const char *arg, unsigned *out, const char **bad, int *bad_len)
{
    static const struct {
        const char *name;
        unsigned bit;
    } known[] = {{"all", PEER_ALL}, {"none", 0},     {"pthread", PEER_PTHREAD},
                 {"omp", PEER_OMP}, {"ck", PEER_CK}, {"program", PEER_PROGRAM}};
    unsigned bits = 0;
    const char *p = arg;
    do {
        size_t len = strcspn(p, ",");
        size_t k = 0;
        while (k < sizeof known / sizeof known[0] &&
               (strlen(known[k].name) != len || strncmp(known[k].name, p, len) != 0))
            k++;
        if (k == sizeof known / sizeof known[0]) {
            *bad = p;
            *bad_len = (int)len;
            return -1;
        }
        bits |= known[k].bit;
        p += len;
    } while (*p++ == ',');
    *out = bits;
    return 0;
}

static uint64_t affordable_iterations(const bench_barrier *bb, unsigned n, const struct options *o,
                                      bench_binding *binding, unsigned ncpus)
{
    if (!bb->spin_only || n <= ncpus)
        return o->iterations;
    double per = bench_thread_run(bb, n, 1, 3, binding);
    if (per <= 0)
        return o->iterations;
    double fit = (double)o->budget_ms * 1e6 / per;
    uint64_t k = fit < 5 ? 5 : (uint64_t)fit;
    return k < o->iterations ? k : o->iterations;
}

/*
 * A row of the table, measured one run per round: the r-th run of every row
 * is taken in round r, one row after the other, so that a drifting load (a
 * busy neighbour's phases, the kernel's placement of unbound threads)
 * falls on every row alike, and each row's ratio to glibc's barrier is
 * taken run by run, against glibc's run of the same round. Measured row
 * after row, the same glibc barrier ran 0.6-1.5x itself from one block of
 * runs to the next beside 2 busy loops here. design.md section 4.
 */
struct row {
    struct result *res;
    enum { ROW_THREADS, ROW_PROCESSES, ROW_OMP } kind;
    bench_barrier bb; /* ROW_THREADS */
    bool topsync;     /* ROW_PROCESSES: opts is a topsync barrier's; else glibc's */
    topsync_barrier_options_t opts;
    uint64_t warmup;
};

static void row_threads(struct row *row, const bench_barrier *bb, const struct options *o,
                        bench_binding *binding, unsigned ncpus, struct result *res)
{
    *row = (struct row){.res = res, .kind = ROW_THREADS, .bb = *bb};
    snprintf(res->name, sizeof res->name, "%s", bb->name);
    res->wait = bb->wait;
    res->iterations = affordable_iterations(bb, o->threads, o, binding, ncpus);
    row->warmup = res->iterations / 10 ? res->iterations / 10 : 1;
}

/* With forked processes: a topsync algorithm, or with a NULL, glibc's
 * barrier made process-shared (the peer). */
static void row_processes(struct row *row, const char *name, const bench_topsync_arg *a,
                          const struct options *o, struct result *res)
{
    *row = (struct row){.res = res, .kind = ROW_PROCESSES, .topsync = a != NULL};
    if (a)
        bench_topsync_options(a, &row->opts);
    snprintf(res->name, sizeof res->name, "%s", name);
    res->iterations = o->iterations;
    row->warmup = o->iterations / 10 ? o->iterations / 10 : 1;
}

static void row_omp(struct row *row, const struct options *o, struct result *res)
{
    *row = (struct row){.res = res, .kind = ROW_OMP};
    snprintf(res->name, sizeof res->name, "peer:omp");
    res->wait = "libgomp";
    res->iterations = o->iterations;
    row->warmup = o->iterations / 10 + 1;
}

/* Run r of the row; a row that failed (or, for libgomp, is not built in)
 * runs no more. */
static void row_run(struct row *row, unsigned r, const struct options *o, bench_binding *binding)
{
    struct result *res = row->res;
    if (res->failed)
        return;
    /* relaxed: read here, between runs, by the thread that ran them */
    uint64_t switches_before = atomic_load_explicit(&bench_topsync_switches, memory_order_relaxed);
    switch (row->kind) {
    case ROW_THREADS:
        res->runs[r] =
            bench_thread_run(&row->bb, o->threads, row->warmup, res->iterations, binding);
        break;
    case ROW_PROCESSES:
        res->runs[r] =
            row->topsync
                ? bench_process_run(&row->opts, o->threads, row->warmup, res->iterations, binding,
                                    res->resolved, sizeof res->resolved)
                : bench_pthread_process_run(o->threads, row->warmup, res->iterations, binding);
        break;
    case ROW_OMP:
        if (bench_omp_runs(o->threads, row->warmup, res->iterations, 1, bench_bind_rank, binding,
                           &res->runs[r]) != 0)
            res->runs[r] = -1;
        break;
    }
    if (res->runs[r] < 0)
        res->failed = 1;
    res->switches +=
        atomic_load_explicit(&bench_topsync_switches, memory_order_relaxed) - switches_before;
}

/* The median over the runs of a's run over b's run of the same round. */
static double paired_ratio(const struct result *a, const struct result *b)
{
    double ratios[MAX_RUNS];
    unsigned n = a->nruns < b->nruns ? a->nruns : b->nruns;
    for (unsigned r = 0; r < n; r++)
        ratios[r] = a->runs[r] / b->runs[r];
    return n ? bench_median_in_place(ratios, n) : 0;
}

static void print_json(FILE *f, const struct result *results, size_t nres, const struct options *o)
{
    fprintf(f, "[\n");
    for (size_t i = 0; i < nres; i++) {
        const struct result *r = &results[i];
        fprintf(f,
                "  {\"algorithm\": \"%s\", \"participants\": %u, \"kind\": \"%s\", "
                "\"bind\": \"%s\", \"noise\": %u, \"wait\": \"%s\", \"latency_ns\": %.1f, "
                "\"median_ns\": %.1f, \"iterations\": %llu, \"runs_ns\": [",
                r->name, o->threads, o->processes ? "processes" : "threads",
                o->unbound ? "none" : "core", o->noise, r->wait, r->failed ? -1.0 : r->latency_ns,
                r->failed ? -1.0 : bench_median(r->runs, r->nruns),
                (unsigned long long)r->iterations);
        for (unsigned k = 0; k < r->nruns; k++)
            fprintf(f, "%s%.1f", k ? ", " : "", r->runs[k]);
        fprintf(f, "]");
        if (r->paired_vs_pthread > 0)
            fprintf(f, ", \"vs_pthread_paired\": %.4f", r->paired_vs_pthread);
        if (r->topsync)
            fprintf(f, ", \"switches\": %llu", (unsigned long long)r->switches);
        fprintf(f, "%s%s%s}%s\n", r->resolved[0] ? ", \"resolved\": \"" : "", r->resolved,
                r->resolved[0] ? "\"" : "", i + 1 < nres ? "," : "");
    }
    fprintf(f, "]\n");
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: topsync-bench barrier --threads N|--processes N [--algorithm NAME|all]\n"
            "                     [--wait POLICY] [--bind core|none] [--iterations K] [--runs R]\n"
            "                     [--budget-ms MS] [--run-ms MS] [--peers LIST] [--noise N]\n"
            "                     [--json]\n"
            "                     [--output FILE.json]\n"
            "  --threads N       participants (threads), 1 to 4096\n"
            "  --processes N     participants (forked processes; the one peer: pthread,\n"
            "                    process-shared), 1 to 4096\n"
            "  --bind WHAT       core: rank r on core r mod cores (default); none: unbound\n"
            "  --algorithm NAME  a barrier algorithm or all (default all)\n"
            "  --wait POLICY     spin, yield or block (default: TOPSYNC_WAIT, else block)\n"
            "  --iterations K    barriers per timed run (default 1000)\n"
            "  --runs R          timed runs; reported: the mean of the runs with the\n"
            "                    smallest and largest dropped (the paper's protocol,\n"
            "                    design.md section 4; the plain mean below 3 runs), and\n"
            "                    the median of the runs beside it (default 5)\n"
            "  --budget-ms MS    time limit per algorithm (default 300)\n"
            "  --run-ms MS       about MS milliseconds per timed run at least: more\n"
            "                    iterations for a row whose first runs were shorter (a busy\n"
            "                    node: runs that span many scheduler time slices; at most\n"
            "                    4 MS at its slowest first run; default 0, none)\n"
            "  --peers LIST      also run these peers: all (default), none, or a comma-\n"
            "                    separated list of pthread, omp (libgomp), ck (Concurrency\n"
            "                    Kit), program (a pthread program, natively and preloaded)\n"
            "  --noise N         N busy neighbour processes (endless arithmetic, unbound)\n"
            "                    run during the whole measurement: a shared node (default 0)\n"
            "  --json            JSON on stdout instead of the table\n"
            "  --output FILE     also write the JSON to FILE\n");
}

static int cmd_barrier(int argc, char **argv)
{
    struct options o = {.threads = 0,
                        .runs = 5,
                        .iterations = 1000,
                        .budget_ms = 300,
                        .algorithm = "all",
                        .wait = TOPSYNC_WAIT_DEFAULT,
                        .peers = PEER_ALL};
    enum {
        O_THREADS = 256,
        O_ALG,
        O_WAIT,
        O_ITER,
        O_RUNS,
        O_JSON,
        O_PEERS,
        O_BUDGET,
        O_OUTPUT,
        O_HELP,
        O_PROCESSES,
        O_BIND,
        O_NOISE,
        O_RUN_MS
    };
    static const struct option longopts[] = {{"threads", required_argument, 0, O_THREADS},
                                             {"algorithm", required_argument, 0, O_ALG},
                                             {"wait", required_argument, 0, O_WAIT},
                                             {"iterations", required_argument, 0, O_ITER},
                                             {"runs", required_argument, 0, O_RUNS},
                                             {"json", no_argument, 0, O_JSON},
                                             {"peers", required_argument, 0, O_PEERS},
                                             {"budget-ms", required_argument, 0, O_BUDGET},
                                             {"run-ms", required_argument, 0, O_RUN_MS},
                                             {"output", required_argument, 0, O_OUTPUT},
                                             {"help", no_argument, 0, O_HELP},
                                             {"processes", required_argument, 0, O_PROCESSES},
                                             {"bind", required_argument, 0, O_BIND},
                                             {"noise", required_argument, 0, O_NOISE},
                                             {0, 0, 0, 0}};
    int c;
    uint64_t v;
    unsigned given = 0; /* bit c - O_THREADS: options seen; each takes one value */
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        if (c >= O_THREADS && c <= O_NOISE && c != O_HELP) {
            if (given & 1u << (c - O_THREADS)) {
                for (const struct option *lo = longopts; lo->name; lo++)
                    if (lo->val == c)
                        fprintf(stderr,
                                "topsync-bench: --%s given twice; it takes one value "
                                "(--algorithm: one name or all)\n",
                                lo->name);
                return 2;
            }
            given |= 1u << (c - O_THREADS);
        }
        switch (c) {
        case O_THREADS:
        case O_PROCESSES:
            if (bench_parse_u64(optarg, &v, 1, 4096)) {
                fprintf(stderr, "topsync-bench: --%s takes 1..4096, not '%s'\n",
                        c == O_THREADS ? "threads" : "processes", optarg);
                return 2;
            }
            if (o.threads && (c == O_PROCESSES) != o.processes) {
                fprintf(stderr, "topsync-bench: give --threads or --processes, not both\n");
                return 2;
            }
            o.threads = (unsigned)v;
            o.processes = c == O_PROCESSES;
            break;
        case O_BIND:
            if (strcmp(optarg, "core") && strcmp(optarg, "none")) {
                fprintf(stderr, "topsync-bench: --bind takes core or none, not '%s'\n", optarg);
                return 2;
            }
            o.unbound = !strcmp(optarg, "none");
            break;
        case O_NOISE:
            if (bench_parse_u64(optarg, &v, 0, 256)) {
                fprintf(stderr, "topsync-bench: --noise takes 0..256 processes, not '%s'\n",
                        optarg);
                return 2;
            }
            o.noise = (unsigned)v;
            break;
        case O_ALG: o.algorithm = optarg; break;
        case O_WAIT:
            if (topsync_wait_policy_parse(optarg, &o.wait) < 0) {
                fprintf(stderr, "topsync-bench: %s\n", topsync_error_message());
                return 2;
            }
            break;
        case O_ITER:
            if (bench_parse_u64(optarg, &o.iterations, 1, UINT64_MAX / 2)) {
                fprintf(stderr, "topsync-bench: --iterations takes a positive number\n");
                return 2;
            }
            break;
        case O_RUNS:
            if (bench_parse_u64(optarg, &v, 1, MAX_RUNS)) {
                fprintf(stderr, "topsync-bench: --runs takes 1..%d\n", MAX_RUNS);
                return 2;
            }
            o.runs = (unsigned)v;
            break;
        case O_BUDGET:
            if (bench_parse_u64(optarg, &o.budget_ms, 1, 3600000)) {
                fprintf(stderr, "topsync-bench: --budget-ms takes a positive number\n");
                return 2;
            }
            break;
        case O_RUN_MS:
            if (bench_parse_u64(optarg, &o.run_ms, 0, 600000)) {
                fprintf(stderr, "topsync-bench: --run-ms takes 0 to 600000, not '%s'\n", optarg);
                return 2;
            }
            break;
        case O_JSON: o.json = 1; break;
        case O_OUTPUT: o.output = optarg; break;
        case O_PEERS: {
            const char *bad = "";
            int bad_len = 0;
            if (parse_peers(optarg, &o.peers, &bad, &bad_len) < 0) {
                fprintf(stderr,
                        "topsync-bench: --peers takes all, none or a comma-separated list of "
                        "pthread, omp, ck, program; not '%.*s' (in '%s')\n",
                        bad_len, bad, optarg);
                return 2;
            }
            break;
        }
        case 'h':
        case O_HELP: usage(stdout); return 0;
        default: /* getopt named the option */
            fprintf(stderr, "Try 'topsync-bench barrier --help'.\n");
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr,
                "topsync-bench: unexpected argument '%s'; try 'topsync-bench barrier "
                "--help'\n",
                argv[optind]);
        return 2;
    }
    if (o.threads == 0) {
        fprintf(stderr, "topsync-bench: --threads N (or --processes N) is required\n");
        usage(stderr);
        return 2;
    }
    if (strcmp(o.algorithm, "all") != 0 && topsync_barrier_algorithm_validate(o.algorithm) < 0) {
        fprintf(stderr, "topsync-bench: %s\n", topsync_error_message());
        return 2;
    }
    /* before minutes of measuring, not after */
    if (o.output && cli_output_check("topsync-bench", o.output, CLI_OUTPUT_JSON, NULL))
        return 1;

    bench_binding binding = {NULL, NULL, o.threads};
    int loaded = bench_topology_load("topsync-bench", &binding.topo);
    if (loaded)
        return loaded;
    unsigned ncpus = topsync_topology_ncores(binding.topo);
    binding.sets = calloc(o.threads, sizeof *binding.sets);
    if (!binding.sets || topsync_placement_compute(binding.topo, o.threads, TOPSYNC_MAP_BY_CORE,
                                                   TOPSYNC_BIND_TO_CORE, binding.sets) < 0) {
        fprintf(stderr, "topsync-bench: %s\n", topsync_error_message());
        return 1;
    }
    hwloc_bitmap_t *bound_sets = binding.sets;
    if (o.unbound)
        binding.sets = NULL; /* the participants run where the kernel puts them */
    if (o.processes)
        o.peers &= PEER_PTHREAD; /* the other peers are thread barriers */
    if (bench_noise_start(o.noise) < 0)
        return 1;

    /* What to run: topsync algorithms, then peers. */
    static const char *const all_algorithms[] = {"auto",
                                                 "sense-reversing",
                                                 "sense-reversing-counter",
                                                 "sense-reversing-gr",
                                                 "combining-tree",
                                                 "mcs",
                                                 "tournament",
                                                 "dissemination",
                                                 "topo",
                                                 "topo/tree"};
    size_t nalg = sizeof all_algorithms / sizeof all_algorithms[0];
    const char *const *names = all_algorithms;
    const char *single[1] = {o.algorithm};
    if (strcmp(o.algorithm, "all") != 0) {
        names = single;
        nalg = 1;
    }
    const bench_barrier *ck;
    int nck = o.peers & PEER_CK ? bench_ck_peers(&ck) : 0;
    size_t ntotal = nalg + 4 + (size_t)nck;
    struct result *results = calloc(ntotal, sizeof *results);
    struct row *rows = calloc(ntotal, sizeof *rows);
    bench_topsync_arg *targs = calloc(nalg, sizeof *targs);
    if (!results || !rows || !targs) {
        fprintf(stderr, "topsync-bench: out of memory\n");
        bench_noise_stop();
        return 1;
    }
    size_t nrows = 0;
    char wait_name[16];

    for (size_t i = 0; i < nalg; i++) {
        targs[i] = (bench_topsync_arg){names[i], o.wait, &binding};
        if (i == 0) {
            /* An untimed run first: the first run of a process pays for its
             * threads' stacks, page faults and the CPUs' wake-up (8 threads
             * here: 80-94 us in the first run against 6-7 us after), which
             * would otherwise land on whichever algorithm comes first. */
            bench_barrier warm = {
                names[0],  NULL, bench_topsync_create, bench_topsync_wait, bench_topsync_destroy,
                &targs[0], 0};
            if (o.processes) {
                struct result scratch = {0};
                struct row once;
                row_processes(&once, names[0], &targs[0], &o, &scratch);
                row_run(&once, 0, &o, &binding);
            } else {
                bench_thread_run(&warm, o.threads, 1, o.iterations, &binding);
            }
        }
        /* the resolved policy name, as the barrier reports it */
        topsync_barrier_t *probe = bench_topsync_create(o.threads, &targs[i]);
        if (!probe) {
            bench_noise_stop();
            return 1;
        }
        snprintf(wait_name, sizeof wait_name, "%s", topsync_barrier_wait_policy_name(probe));
        const char *resolved = topsync_barrier_algorithm(probe);
        bench_barrier bb = {names[i],
                            NULL,
                            bench_topsync_create,
                            bench_topsync_wait,
                            bench_topsync_destroy,
                            &targs[i],
                            !strcmp(wait_name, "spin")};
        bb.wait = strcmp(wait_name, "spin") == 0    ? "spin"
                  : strcmp(wait_name, "yield") == 0 ? "yield"
                                                    : "block";
        struct result *res = &results[nrows];
        snprintf(res->resolved, sizeof res->resolved, "%s", resolved);
        res->topsync = true;
        topsync_barrier_destroy(probe);
        if (o.processes) {
            row_processes(&rows[nrows], names[i], &targs[i], &o, res);
            res->wait = bb.wait;
        } else {
            row_threads(&rows[nrows], &bb, &o, &binding, ncpus, res);
        }
        nrows++;
    }
    if (o.peers & PEER_PTHREAD && o.processes) {
        /* glibc's barrier, process-shared, the same processes' way */
        results[nrows].wait = "futex";
        row_processes(&rows[nrows], "peer:pthread", NULL, &o, &results[nrows]);
        nrows++;
    } else if (o.peers & PEER_PTHREAD) {
        bench_barrier pb = {
            "peer:pthread", "futex", pthread_create_fn, pthread_wait_fn, pthread_destroy_fn,
            NULL,           0};
        row_threads(&rows[nrows], &pb, &o, &binding, ncpus, &results[nrows]);
        nrows++;
    }
    if (o.peers & PEER_OMP) {
        row_omp(&rows[nrows], &o, &results[nrows]);
        nrows++;
    }
    for (int k = 0; k < nck; k++) {
        row_threads(&rows[nrows], &ck[k], &o, &binding, ncpus, &results[nrows]);
        nrows++;
    }
    /* --run-ms: three first runs of each row give its time per barrier
     * (their median: one run beside a busy neighbour may be a lucky or an
     * unlucky slice), and its iterations grow so that a run lasts at least
     * run_ms; those runs, and their switches, are not kept */
    for (size_t i = 0; o.run_ms && i < nrows; i++) {
        bench_progress("topsync-bench barrier", (unsigned)i, (unsigned)nrows,
                       "(--run-ms: timing first runs)");
        struct result *res = &results[i];
        double first[3];
        for (unsigned k = 0; k < 3 && !res->failed; k++) {
            row_run(&rows[i], 0, &o, &binding);
            first[k] = res->runs[0];
        }
        double slowest = first[0] > first[1] ? first[0] : first[1];
        slowest = first[2] > slowest ? first[2] : slowest;
        double per = res->failed ? 0 : bench_median_in_place(first, 3);
        double want = (double)o.run_ms * 1e6;
        if (per > 0 && per * (double)res->iterations < want) {
            /* a peer whose slow runs are far slower (libgomp's spin beside
             * busy neighbours: 1 us or 100 us a barrier) is held to 4
             * run_ms at its slowest first run, not to hours */
            double most = 4 * want / slowest;
            res->iterations = (uint64_t)((want / per < most ? want / per : most)) + 1;
            rows[i].warmup = res->iterations / 10 ? res->iterations / 10 : 1;
        }
        res->switches = 0;
    }
    for (unsigned r = 0; r < o.runs; r++)
        for (size_t i = 0; i < nrows; i++) {
            char what[96];
            snprintf(what, sizeof what, "(run %u of %u: %s)", r + 1, o.runs, results[i].name);
            bench_progress("topsync-bench barrier", (unsigned)(r * nrows + i),
                           (unsigned)(o.runs * nrows), what);
            row_run(&rows[i], r, &o, &binding);
        }
    bench_progress_end();
    size_t nres = 0;
    const struct result *glibc = NULL;
    for (size_t i = 0; i < nrows; i++) {
        struct result *res = &results[i];
        res->nruns = o.runs;
        if (rows[i].kind == ROW_OMP && res->failed)
            continue; /* built without OpenMP: no row, as before rounds */
        if (!res->failed)
            res->latency_ns = bench_protocol_summary(res->runs, o.runs);
        if (!strcmp(res->name, "peer:pthread") && !res->failed)
            glibc = &results[nres];
        results[nres++] = *res;
    }
    for (size_t i = 0; glibc && i < nres; i++)
        if (!results[i].failed)
            results[i].paired_vs_pthread = paired_ratio(&results[i], glibc);
    if (o.peers & PEER_PROGRAM) {
        /* the drop-in: an unmodified program, separate processes */
        struct result *g = &results[nres], *p = &results[nres + 1];
        snprintf(g->name, sizeof g->name, "peer:pthread-program");
        snprintf(p->name, sizeof p->name, "preload:pthread-program");
        g->wait = "futex";
        p->wait = "block";
        /* --run-ms: as many iterations as glibc's row needed for it */
        uint64_t iterations = o.iterations;
        if (o.run_ms && glibc && glibc->iterations > iterations)
            iterations = glibc->iterations;
        g->iterations = p->iterations = iterations;
        g->nruns = p->nruns = o.runs;
        if (bench_pthread_dropin_runs(o.threads, iterations, o.runs, o.unbound, g->runs, p->runs,
                                      p->resolved, sizeof p->resolved) == 0) {
            snprintf(g->resolved, sizeof g->resolved, "glibc");
            g->latency_ns = bench_protocol_summary(g->runs, o.runs);
            p->latency_ns = bench_protocol_summary(p->runs, o.runs);
            char *slash = strrchr(p->resolved, '/'); /* "topsync:ALG/WAIT" */
            if (slash) {
                p->wait = !strcmp(slash + 1, "spin")    ? "spin"
                          : !strcmp(slash + 1, "yield") ? "yield"
                                                        : "block";
                *slash = '\0';
            }
            nres += 2;
        }
    }

    bench_noise_stop();
    double pthread_ns = 0;
    for (size_t i = 0; i < nres; i++)
        if (!strcmp(results[i].name, "peer:pthread"))
            pthread_ns = results[i].latency_ns;

    if (o.output) {
        cli_output_t out;
        if (cli_output_open(&out, "topsync-bench", o.output, CLI_OUTPUT_JSON, NULL))
            return 1;
        print_json(out.f, results, nres, &o);
        if (cli_output_close(&out))
            return 1;
    }
    if (o.json) {
        print_json(stdout, results, nres, &o);
    } else {
        char words[160];
        char busy[64] = "an otherwise idle machine";
        if (o.noise)
            snprintf(busy, sizeof busy, "%u busy neighbour process%s", o.noise,
                     o.noise == 1 ? "" : "es");
        printf("barrier latency, %u %s on %u cores (%s, %s, %s), %u runs of %llu iterations:\n"
               "the slowest participant's mean per run; of the runs, %s\n"
               "Run r of every row is taken in round r; vs pthread: the median of each\n"
               "run's ratio to glibc's run of its round (the pthread-program rows, run\n"
               "after the rounds: the ratio of the summaries)\n\n",
               o.threads, o.processes ? "processes" : "threads", ncpus,
               o.threads > ncpus ? "oversubscribed" : "one per core",
               o.unbound ? "unbound" : "bound round robin", busy, o.runs,
               (unsigned long long)o.iterations, bench_protocol_words(o.runs, words, sizeof words));
        printf("  %-24s %-28s %-8s %12s %10s %8s %10s\n", "algorithm", "resolved", "wait",
               "latency ns", "vs pthread", "iters", "median ns");
        for (size_t i = 0; i < nres; i++) {
            struct result *r = &results[i];
            if (r->failed) {
                printf("  %-24s failed\n", r->name);
                continue;
            }
            char vs[16] = "         -";
            if (r->paired_vs_pthread > 0)
                snprintf(vs, sizeof vs, "%9.3fx", r->paired_vs_pthread);
            else if (pthread_ns > 0)
                snprintf(vs, sizeof vs, "%9.3fx", r->latency_ns / pthread_ns);
            printf("  %-24s %-28s %-8s %12.1f %s %8llu %10.1f", r->name, r->resolved, r->wait,
                   r->latency_ns, vs, (unsigned long long)r->iterations,
                   bench_median(r->runs, r->nruns));
            if (r->switches)
                printf("  (%llu switches, TOPSYNC_REACTIVE)", (unsigned long long)r->switches);
            printf("\n");
        }
    }
    double program_ns = 0, preload_ns = 0;
    const struct result *program_row[2] = {NULL, NULL}; /* glibc's, topsync's */
    for (size_t i = 0; i < nres; i++) {
        if (!strcmp(results[i].name, "peer:pthread-program")) {
            program_ns = results[i].latency_ns;
            program_row[0] = &results[i];
        }
        if (!strcmp(results[i].name, "preload:pthread-program")) {
            preload_ns = results[i].latency_ns;
            program_row[1] = &results[i];
        }
    }
    if (!o.json && program_ns > 0 && preload_ns > 0)
        printf("\n  drop-in: the same pthread program with libtopsync-pthread preloaded takes "
               "%.3fx glibc's barrier (%.1f ns against %.1f ns; run by run, alternating: "
               "%.3fx)\n",
               preload_ns / program_ns, preload_ns, program_ns,
               paired_ratio(program_row[1], program_row[0]));
    for (unsigned r = 0; r < o.threads; r++)
        hwloc_bitmap_free(bound_sets[r]);
    free(bound_sets);
    free(results);
    free(rows);
    free(targs);
    topsync_topology_destroy(binding.topo);
    return 0;
}

/* --mpi: run the MPI benchmark of the MPI that started this process. */
static int exec_mpi(char **argv)
{
    char self[4096];
    const char *impl;
    /* the collectives' helper is a plain MPI program: natively it times
     * the MPI's own, with libtopsync-mpi preloaded topsync's */
    bool coll = argv[1] && (!strcmp(argv[1], "allreduce") || !strcmp(argv[1], "reduce") ||
                            !strcmp(argv[1], "bcast"));
    int rc =
        bench_mpi_helper("topsync-bench", coll ? "topsync-bench-coll-mpi" : "topsync-bench-mpi",
                         self, sizeof self, &impl);
    if (rc)
        return rc;
    argv[0] = self;
    execv(self, argv);
    fprintf(stderr, "topsync-bench: cannot run %s: %s (built without %s?)\n", self, strerror(errno),
            impl);
    return 1;
}

int main(int argc, char **argv)
{
    cli_check_stdout_at_exit("topsync-bench");
    /* --help prints the help wherever it runs, under mpirun or not */
    bool help = false, mpi = false;
    for (int i = 1; i < argc; i++) {
        help |= !strcmp(argv[i], "--help") || !strcmp(argv[i], "-h");
        mpi |= !strcmp(argv[i], "--mpi");
    }
    if (mpi && help) {
        bench_mpi_usage(stdout);
        return 0;
    }
    if (mpi)
        return exec_mpi(argv);
    if (argc >= 2 && !strcmp(argv[1], "--version")) {
        printf("topsync-bench (topsync) %s\n", topsync_version());
        return 0;
    }
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fprintf(argc < 2 ? stderr : stdout, "usage: topsync-bench barrier [options]   (--help)\n"
                                            "       topsync-bench rcl [options]       (--help)\n"
                                            "       topsync-bench c2c [options]       (--help)\n"
                                            "       topsync-bench allreduce|reduce|bcast [options]"
                                            " (--help)\n");
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "barrier"))
        return cmd_barrier(argc - 1, argv + 1);
    if (!strcmp(argv[1], "rcl"))
        return cmd_rcl(argc - 1, argv + 1);
    if (!strcmp(argv[1], "c2c"))
        return bench_c2c(argc - 1, argv + 1);
    if (!strcmp(argv[1], "allreduce") || !strcmp(argv[1], "reduce") || !strcmp(argv[1], "bcast"))
        return bench_coll_main(argc - 1, argv + 1);
    fprintf(stderr,
            "topsync-bench: unknown benchmark '%s'; valid: barrier, rcl, c2c, allreduce, reduce, "
            "bcast\n",
            argv[1]);
    return 2;
}
