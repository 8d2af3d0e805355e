/*
 * topsync-bench c2c: this machine's core-to-core latency table, in the CSV
 * format of data/c2c (the machine model's input, docs/model.md).
 *
 * The method of the tables' own tool (core-to-core-latency): for each pair
 * of PUs, two threads pinned on them bounce one cache line with
 * compare-exchange, each waiting for the other's value before writing its
 * own; a message is one successful compare-exchange after the other's, and
 * the figure is the time of K round trips over 2K. Each pair is measured
 * R times and the median kept. Row i, column j < i: PU OS index i and j.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <topsync.h>

#include "bench.h"
#include "cli_output.h"

struct bounce {
    alignas(256) _Atomic uint64_t word; /* the line that moves: alone on its lines */
    char pad[256 - sizeof(uint64_t)];
    alignas(256) _Atomic int ready;
    hwloc_topology_t topo;
    unsigned pu[2];
    uint64_t round_trips;
    uint64_t elapsed_ns;
};

static void pin(hwloc_topology_t topo, unsigned pu)
{
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    hwloc_bitmap_only(set, pu);
    hwloc_set_cpubind(topo, set, HWLOC_CPUBIND_THREAD);
    hwloc_bitmap_free(set);
}

/* Side 1 answers: waits for 2k+1, writes 2k+2. */
static void *answer(void *arg)
{
    struct bounce *b = arg;
    pin(b->topo, b->pu[1]);
    /* relaxed: the start flag orders nothing, it only lines the two up */
    atomic_fetch_add_explicit(&b->ready, 1, memory_order_relaxed);
    for (uint64_t k = 0; k < b->round_trips; k++) {
        uint64_t want = 2 * k + 1;
        /* relaxed: the value itself is the message; nothing else is published */
        while (!atomic_compare_exchange_strong_explicit(&b->word, &want, want + 1,
                                                        memory_order_relaxed, memory_order_relaxed))
            want = 2 * k + 1;
    }
    return NULL;
}

/* One measurement of a pair: ns per message, or a negative value. */
static double measure_pair(hwloc_topology_t topo, unsigned a, unsigned b, uint64_t round_trips)
{
    struct bounce *x = aligned_alloc(256, sizeof *x);
    if (!x)
        return -1;
    memset(x, 0, sizeof *x);
    x->topo = topo;
    x->pu[0] = a;
    x->pu[1] = b;
    x->round_trips = round_trips;
    pthread_t tid;
    if (pthread_create(&tid, NULL, answer, x) != 0) {
        free(x);
        return -1;
    }
    pin(topo, a);
    while (atomic_load_explicit(&x->ready, memory_order_relaxed) == 0)
        ;
    uint64_t t0 = bench_now_ns();
    for (uint64_t k = 0; k < round_trips; k++) {
        uint64_t want = 2 * k;
        while (!atomic_compare_exchange_strong_explicit(&x->word, &want, want + 1,
                                                        memory_order_relaxed, memory_order_relaxed))
            want = 2 * k;
    }
    /* the answer to the last message ends the last round trip */
    while (atomic_load_explicit(&x->word, memory_order_relaxed) != 2 * round_trips)
        ;
    uint64_t t1 = bench_now_ns();
    pthread_join(tid, NULL);
    free(x);
    return (double)(t1 - t0) / (2.0 * (double)round_trips);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: topsync-bench c2c [--iterations K] [--runs R] [--output FILE.csv]\n"
               "  --iterations K  round trips per measurement (default 5000)\n"
               "  --runs R        measurements per pair, the median kept (default 5)\n"
               "  --output FILE   write the table there (default: standard output)\n"
               "The table: CSV, row i and column j < i hold the ns of one message between\n"
               "PU OS index i and j (the format of data/c2c, read by topsync-sim --c2c).\n");
}

int bench_c2c_table(topsync_topology_t *t, uint64_t iterations, unsigned runs, double **out,
                    unsigned *n_out)
{
    hwloc_topology_t topo = topsync_topology_hwloc(t);
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (!set) {
        fprintf(stderr, "topsync-bench: out of memory\n");
        return -1;
    }
    if (hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) < 0 || hwloc_bitmap_iszero(set))
        hwloc_bitmap_copy(set, hwloc_topology_get_allowed_cpuset(topo));
    int last = hwloc_bitmap_last(set);
    unsigned n = last < 0 ? 0 : (unsigned)last + 1;
    if (n < 2 || (unsigned)hwloc_bitmap_weight(set) != n) {
        fprintf(stderr,
                "topsync-bench: c2c needs the CPUs 0..N-1 without holes (a CSV table "
                "indexes CPUs by OS number); this process may run on %d CPU(s), the "
                "highest %d\n",
                hwloc_bitmap_weight(set), last);
        hwloc_bitmap_free(set);
        return -1;
    }
    hwloc_bitmap_free(set);
    double *table = calloc((size_t)n * n, sizeof *table);
    if (!table) {
        fprintf(stderr, "topsync-bench: out of memory\n");
        return -1;
    }
    for (unsigned i = 1; i < n; i++)
        for (unsigned j = 0; j < i; j++) {
            double samples[BENCH_MAX_RUNS];
            for (unsigned r = 0; r < runs; r++)
                samples[r] = measure_pair(topo, i, j, iterations);
            double v = bench_median(samples, runs);
            if (!(v > 0)) {
                fprintf(stderr, "topsync-bench: c2c: measuring CPUs %u and %u failed\n", i, j);
                free(table);
                return -1;
            }
            table[(size_t)i * n + j] = table[(size_t)j * n + i] = v;
        }
    /* the measuring threads were pinned: give the caller its CPUs back */
    hwloc_set_cpubind(topo, hwloc_topology_get_allowed_cpuset(topo), HWLOC_CPUBIND_THREAD);
    *out = table;
    *n_out = n;
    return 0;
}

int bench_c2c(int argc, char **argv)
{
    uint64_t iterations = 5000, runs = 5;
    const char *output = NULL;
    enum { O_ITER = 256, O_RUNS, O_OUT, O_HELP };
    static const struct option longopts[] = {{"iterations", required_argument, 0, O_ITER},
                                             {"runs", required_argument, 0, O_RUNS},
                                             {"output", required_argument, 0, O_OUT},
                                             {"help", no_argument, 0, O_HELP},
                                             {0, 0, 0, 0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case O_ITER:
            if (bench_parse_u64(optarg, &iterations, 1, 100000000)) {
                fprintf(stderr, "topsync-bench: --iterations takes 1..100000000, not '%s'\n",
                        optarg);
                return 2;
            }
            break;
        case O_RUNS:
            if (bench_parse_u64(optarg, &runs, 1, BENCH_MAX_RUNS)) {
                fprintf(stderr, "topsync-bench: --runs takes 1..%d, not '%s'\n", BENCH_MAX_RUNS,
                        optarg);
                return 2;
            }
            break;
        case O_OUT: output = optarg; break;
        case 'h':
        case O_HELP: usage(stdout); return 0;
        default: fprintf(stderr, "Try 'topsync-bench c2c --help'.\n"); return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr,
                "topsync-bench: unexpected argument '%s'; try 'topsync-bench c2c "
                "--help'\n",
                argv[optind]);
        return 2;
    }
    if (output && cli_output_check("topsync-bench", output, CLI_OUTPUT_NUMBERS, NULL))
        return 1;
    topsync_topology_t *t;
    int loaded = bench_topology_load("topsync-bench", &t);
    if (loaded)
        return loaded;
    double *table;
    unsigned n;
    int rc = bench_c2c_table(t, iterations, (unsigned)runs, &table, &n);
    topsync_topology_destroy(t);
    if (rc < 0)
        return 1;
    cli_output_t out = {.f = stdout};
    if (output && cli_output_open(&out, "topsync-bench", output, CLI_OUTPUT_NUMBERS, NULL)) {
        free(table);
        return 1;
    }
    for (unsigned i = 0; i < n; i++) {
        for (unsigned j = 0; j < n; j++)
            if (j < i)
                fprintf(out.f, "%s%.6f", j ? "," : "", table[(size_t)i * n + j]);
            else
                fputs(j ? "," : "", out.f);
        fputc('\n', out.f);
    }
    free(table);
    /* standard output is checked at exit (cli_check_stdout_at_exit) */
    return output ? cli_output_close(&out) : 0;
}
