/*
 * topsync-bench c2c: this machine's core-to-core latency table, in the CSV
 * format of data/c2c (the machine model's input, docs/model.md).
 *
 * The method of the tables' own tool (core-to-core-latency): for each pair
 * of PUs, two threads pinned on them bounce one cache line with
 * compare-exchange, each waiting for the other's value before writing its
 * own; a message is one successful compare-exchange after the other's, and
 * the figure is the time of K round trips over 2K. Each pair is measured
 * R times and the median kept; a pair the model would take as disturbed
 * (docs/model.md, "Disturbed pairs") is measured again and keeps the lower
 * median. Row i, column j < i: PU OS index i and j.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
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

/* The CPUs this process may run on (its binding, else all allowed); NULL
 * after a message. */
static hwloc_bitmap_t usable_cpus(hwloc_topology_t topo)
{
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (!set) {
        fprintf(stderr, "topsync-bench: out of memory\n");
        return NULL;
    }
    if (hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) < 0 || hwloc_bitmap_iszero(set))
        hwloc_bitmap_copy(set, hwloc_topology_get_allowed_cpuset(topo));
    return set;
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
    uint64_t t0 = ts_monotonic_ns();
    for (uint64_t k = 0; k < round_trips; k++) {
        uint64_t want = 2 * k;
        while (!atomic_compare_exchange_strong_explicit(&x->word, &want, want + 1,
                                                        memory_order_relaxed, memory_order_relaxed))
            want = 2 * k;
    }
    /* the answer to the last message ends the last round trip */
    while (atomic_load_explicit(&x->word, memory_order_relaxed) != 2 * round_trips)
        ;
    uint64_t t1 = ts_monotonic_ns();
    pthread_join(tid, NULL);
    free(x);
    return (double)(t1 - t0) / (2.0 * (double)round_trips);
}

/* ---------------------------------------------------------------------- */
/* --mlp: how many cross-core misses one core keeps in flight.               */

enum { MLP_STRIDE = 256 }; /* bytes per line slot: past adjacent-line prefetch pairs */

struct mlp_run {
    alignas(256) _Atomic uint64_t round; /* the writer's: round r's lines are written */
    char pad0[256 - sizeof(uint64_t)];
    alignas(256) _Atomic uint64_t done; /* the reader's: round r is read */
    char pad1[256 - sizeof(uint64_t)];
    unsigned char *slots; /* lines x MLP_STRIDE; slot i's first word: the chain's next */
    uint32_t *next;       /* the chain: a random cyclic permutation */
    unsigned lines;
    uint64_t rounds;
    hwloc_topology_t topo;
    unsigned writer;
};

static _Atomic uint64_t *slot_word(const struct mlp_run *m, unsigned i)
{
    return (_Atomic uint64_t *)(m->slots + (size_t)i * MLP_STRIDE);
}

/* The writer: each round, a fresh value in every line (invalidating the
 * reader's copies), then the round number. */
static void *mlp_writer(void *arg)
{
    struct mlp_run *m = arg;
    pin(m->topo, m->writer);
    for (uint64_t r = 1; r <= m->rounds; r++) {
        /* acquire: pairs with the reader's release of `done`; its reads of
         * round r - 1 are over before these stores invalidate the lines */
        while (atomic_load_explicit(&m->done, memory_order_acquire) != r - 1)
            ;
        for (unsigned i = 0; i < m->lines; i++)
            /* relaxed: published by the release store of `round` below */
            atomic_store_explicit(slot_word(m, i), ((uint64_t)r << 32) | m->next[i],
                                  memory_order_relaxed);
        /* release: pairs with the reader's acquire load of `round` */
        atomic_store_explicit(&m->round, r, memory_order_release);
    }
    return NULL;
}

int bench_c2c_mlp(topsync_topology_t *t, unsigned lines, unsigned rounds, bench_mlp *out)
{
    hwloc_topology_t topo = topsync_topology_hwloc(t);
    hwloc_bitmap_t set = usable_cpus(topo);
    if (!set)
        return -1;
    int reader = hwloc_bitmap_first(set);
    int writer = reader < 0 ? -1 : hwloc_bitmap_next(set, reader);
    hwloc_bitmap_free(set);
    if (writer < 0) {
        fprintf(stderr, "topsync-bench: c2c --mlp needs two CPUs; this process may run on one\n");
        return -1;
    }
    struct mlp_run *m = aligned_alloc(256, sizeof *m);
    unsigned char *slots = aligned_alloc(4096, ((size_t)lines * MLP_STRIDE + 4095) / 4096 * 4096);
    uint32_t *next = malloc(lines * sizeof *next);
    uint32_t *order = malloc(lines * sizeof *order);
    double *dep = malloc(rounds * sizeof *dep), *indep = malloc(rounds * sizeof *indep);
    if (!m || !slots || !next || !order || !dep || !indep) {
        fprintf(stderr, "topsync-bench: out of memory\n");
        free(m), free(slots), free(next), free(order), free(dep), free(indep);
        return -1;
    }
    memset(m, 0, sizeof *m);
    memset(slots, 0, (size_t)lines * MLP_STRIDE);
    /* a random order (fixed seed): no stride for a prefetcher to follow */
    uint64_t x = 0x9e3779b97f4a7c15u;
    for (unsigned i = 0; i < lines; i++)
        order[i] = i;
    for (unsigned i = lines - 1; i > 0; i--) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        unsigned j = (unsigned)(x % (i + 1));
        uint32_t tmp = order[i];
        order[i] = order[j];
        order[j] = tmp;
    }
    for (unsigned k = 0; k < lines; k++) /* the chain visits the lines in that order */
        next[order[k]] = order[(k + 1) % lines];
    m->slots = slots;
    m->next = next;
    m->lines = lines;
    m->rounds = 2 * (uint64_t)rounds;
    m->topo = topo;
    m->writer = (unsigned)writer;
    pthread_t tid;
    if (pthread_create(&tid, NULL, mlp_writer, m) != 0) {
        fprintf(stderr, "topsync-bench: c2c --mlp: cannot start the writer thread\n");
        free(m), free(slots), free(next), free(order), free(dep), free(indep);
        return -1;
    }
    pin(topo, (unsigned)reader);
    uint64_t sink = 0;
    unsigned ndep = 0, nindep = 0;
    for (uint64_t r = 1; r <= m->rounds; r++) {
        /* acquire: pairs with the writer's release of `round`: the lines
         * hold round r's values */
        while (atomic_load_explicit(&m->round, memory_order_acquire) != r)
            ;
        uint64_t t0 = ts_monotonic_ns();
        if (r % 2) { /* dependent: each load's address comes from the one before */
            uint32_t at = order[0];
            for (unsigned k = 0; k < lines; k++)
                at = (uint32_t)atomic_load_explicit(slot_word(m, at), memory_order_relaxed);
            sink += at;
        } else { /* independent: the addresses come from the reader's own array */
            for (unsigned k = 0; k < lines; k++)
                sink += atomic_load_explicit(slot_word(m, order[k]), memory_order_relaxed);
        }
        uint64_t t1 = ts_monotonic_ns();
        double per_line = (double)(t1 - t0) / lines;
        if (r > 2 && r % 2) /* the first round of each kind warms the TLB and the code */
            dep[ndep++] = per_line;
        else if (r > 2)
            indep[nindep++] = per_line;
        /* release: pairs with the writer's acquire of `done` */
        atomic_store_explicit(&m->done, r, memory_order_release);
    }
    pthread_join(tid, NULL);
    hwloc_set_cpubind(topo, hwloc_topology_get_allowed_cpuset(topo), HWLOC_CPUBIND_THREAD);
    out->reader = (unsigned)reader;
    out->writer = (unsigned)writer;
    out->lines = lines;
    out->rounds = rounds;
    out->dependent_ns = bench_median_in_place(dep, ndep);
    out->independent_ns = bench_median_in_place(indep, nindep);
    out->mlp = out->independent_ns > 0 ? out->dependent_ns / out->independent_ns : 0;
    free(m), free(slots), free(next), free(order), free(dep), free(indep);
    if (sink == 1) /* never: keeps the loads' values live */
        fputc('\0', stderr);
    return out->mlp > 0 ? 0 : -1;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: topsync-bench c2c [--iterations K] [--runs R] [--output FILE.csv]\n"
               "       topsync-bench c2c --mlp [--lines N] [--rounds R] [--output FILE.json]\n"
               "  --iterations K  round trips per measurement (default 5000)\n"
               "  --runs R        measurements per pair, the median kept (default 5)\n"
               "  --output FILE   write the table there (default: standard output)\n"
               "The table: CSV, row i and column j < i hold the ns of one message between\n"
               "PU OS index i and j (the format of data/c2c, read by topsync-sim --c2c).\n"
               "  --mlp           instead, the memory-level parallelism of cross-core misses:\n"
               "                  the first CPU reads N lines just written by the second, as a\n"
               "                  chain of dependent loads and as independent loads; JSON with\n"
               "                  ns per line of each (median of R rounds) and their ratio, the\n"
               "                  misses one core keeps in flight (K of docs/model.md)\n"
               "  --lines N       lines per round (2..4096, default 64)\n"
               "  --rounds R      rounds of each kind (1..100000, default 1000)\n");
}

int bench_c2c_remeasure(const topsync_topology_t *t, double *table, unsigned n,
                        double (*measure)(void *arg, unsigned i, unsigned j), void *arg)
{
    topsync_model_options_t o;
    topsync_model_options_init(&o);
    o.c2c_ns = table;
    o.c2c_cpus = n;
    topsync_model_t *m;
    if (topsync_model_create(&m, t, &o) < 0) {
        fprintf(stderr, "topsync-bench: c2c: %s\n", topsync_error_message());
        return -1;
    }
    /* the model copied the table: it keeps a pair to the picosecond, or
     * takes its level's median, whatever is measured again meanwhile */
    int again = 0;
    for (unsigned i = 1; i < n; i++)
        for (unsigned j = 0; j < i; j++) {
            double kept = topsync_model_latency_ns(m, i, j);
            if (kept < 0 || fabs(kept - table[(size_t)i * n + j]) <= 0.01)
                continue;
            double v = measure(arg, i, j);
            again++;
            if (v > 0 && v < table[(size_t)i * n + j])
                table[(size_t)i * n + j] = table[(size_t)j * n + i] = v;
        }
    topsync_model_destroy(m);
    return again;
}

struct pair_measure {
    hwloc_topology_t topo;
    uint64_t iterations;
    unsigned runs;
};

/* One pair's figure: the median of its runs. */
static double measure_median(void *arg, unsigned i, unsigned j)
{
    const struct pair_measure *pm = arg;
    double samples[BENCH_MAX_RUNS];
    for (unsigned r = 0; r < pm->runs; r++)
        samples[r] = measure_pair(pm->topo, i, j, pm->iterations);
    return bench_median(samples, pm->runs);
}

int bench_c2c_table(topsync_topology_t *t, uint64_t iterations, unsigned runs, double **out,
                    unsigned *n_out)
{
    hwloc_topology_t topo = topsync_topology_hwloc(t);
    hwloc_bitmap_t set = usable_cpus(topo);
    if (!set)
        return -1;
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
    unsigned pairs = n * (n - 1) / 2, measured = 0;
    struct pair_measure pm = {topo, iterations, runs};
    for (unsigned i = 1; i < n; i++)
        for (unsigned j = 0; j < i; j++) {
            char what[64];
            snprintf(what, sizeof what, "pairs of CPUs (%u and %u)", i, j);
            bench_progress("topsync-bench c2c", measured++, pairs, what);
            double v = measure_median(&pm, i, j);
            if (!(v > 0)) {
                bench_progress_end();
                fprintf(stderr, "topsync-bench: c2c: measuring CPUs %u and %u failed\n", i, j);
                free(table);
                return -1;
            }
            table[(size_t)i * n + j] = table[(size_t)j * n + i] = v;
        }
    bench_progress_end();
    /* a disturbance during a pair's runs (an interrupt, the host's other
     * guests) leaves it far above its level: measured again at once, the
     * lower figure kept, and said */
    int again = bench_c2c_remeasure(t, table, n, measure_median, &pm);
    if (again < 0) {
        free(table);
        return -1;
    }
    if (again > 0)
        fprintf(stderr,
                "topsync-bench: c2c: %d pair%s far above the other pairs of %s level, "
                "measured again (the lower figure kept)\n",
                again, again == 1 ? "" : "s", again == 1 ? "its" : "their");
    /* the measuring threads were pinned: give the caller its CPUs back */
    hwloc_set_cpubind(topo, hwloc_topology_get_allowed_cpuset(topo), HWLOC_CPUBIND_THREAD);
    *out = table;
    *n_out = n;
    return 0;
}

/* topsync-bench c2c --mlp: measure, print the JSON (to output or stdout). */
static int c2c_mlp_report(topsync_topology_t *t, unsigned lines, unsigned rounds,
                          const char *output)
{
    bench_mlp r;
    int rc = bench_c2c_mlp(t, lines, rounds, &r);
    topsync_topology_destroy(t);
    if (rc < 0)
        return 1;
    cli_output_t out = {.f = stdout};
    if (output && cli_output_open(&out, "topsync-bench", output, CLI_OUTPUT_JSON, NULL))
        return 1;
    fprintf(out.f,
            "{\"reader_cpu\": %u, \"writer_cpu\": %u, \"lines\": %u, \"rounds\": %u, "
            "\"dependent_ns_per_line\": %.3f, \"independent_ns_per_line\": %.3f, "
            "\"mlp\": %.2f}\n",
            r.reader, r.writer, r.lines, r.rounds, r.dependent_ns, r.independent_ns, r.mlp);
    return output ? cli_output_close(&out) : 0;
}

int bench_c2c(int argc, char **argv)
{
    uint64_t iterations = 5000, runs = 5, lines = 64, rounds = 1000;
    const char *output = NULL;
    int mlp = 0;
    const char *table_option = NULL, *mlp_option = NULL; /* given, for the mix check */
    enum { O_ITER = 256, O_RUNS, O_OUT, O_HELP, O_MLP, O_LINES, O_ROUNDS };
    static const struct option longopts[] = {{"iterations", required_argument, 0, O_ITER},
                                             {"runs", required_argument, 0, O_RUNS},
                                             {"output", required_argument, 0, O_OUT},
                                             {"mlp", no_argument, 0, O_MLP},
                                             {"lines", required_argument, 0, O_LINES},
                                             {"rounds", required_argument, 0, O_ROUNDS},
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
            table_option = "--iterations";
            break;
        case O_RUNS:
            if (bench_parse_u64(optarg, &runs, 1, BENCH_MAX_RUNS)) {
                fprintf(stderr, "topsync-bench: --runs takes 1..%d, not '%s'\n", BENCH_MAX_RUNS,
                        optarg);
                return 2;
            }
            table_option = "--runs";
            break;
        case O_MLP: mlp = 1; break;
        case O_LINES:
            if (bench_parse_u64(optarg, &lines, 2, 4096)) {
                fprintf(stderr, "topsync-bench: --lines takes 2..4096, not '%s'\n", optarg);
                return 2;
            }
            mlp_option = "--lines";
            break;
        case O_ROUNDS:
            if (bench_parse_u64(optarg, &rounds, 1, 100000)) {
                fprintf(stderr, "topsync-bench: --rounds takes 1..100000, not '%s'\n", optarg);
                return 2;
            }
            mlp_option = "--rounds";
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
    if (mlp && table_option) {
        fprintf(stderr,
                "topsync-bench: %s is for the latency table, not --mlp (which takes "
                "--lines and --rounds)\n",
                table_option);
        return 2;
    }
    if (!mlp && mlp_option) {
        fprintf(stderr, "topsync-bench: %s goes with --mlp\n", mlp_option);
        return 2;
    }
    cli_output_kind_t kind = mlp ? CLI_OUTPUT_JSON : CLI_OUTPUT_NUMBERS;
    if (output && cli_output_check("topsync-bench", output, kind, NULL))
        return 1;
    topsync_topology_t *t;
    int loaded = bench_topology_load("topsync-bench", &t);
    if (loaded)
        return loaded;
    if (mlp)
        return c2c_mlp_report(t, (unsigned)lines, (unsigned)rounds, output);
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
