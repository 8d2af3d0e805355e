/*
 * topsync-tune: measure the barrier candidates on this machine and write
 * the tuning file that "auto" chooses from (docs/guide/algorithms.md, "auto";
 * include/topsync/tune.h).
 * The why: docs/design.md section 8.26.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <topsync.h>

#include "bench.h"
#include "cli_output.h"

#define MAX_COUNTS 16

struct tune_options {
    unsigned threads[MAX_COUNTS], nthreads;
    unsigned processes[MAX_COUNTS], nprocesses;
    const char *bind; /* auto, core, none */
    uint64_t iterations;
    unsigned runs;
    int c2c;
    const char *output;
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: topsync-tune [--threads LIST] [--processes LIST] [--bind auto|core|none]\n"
            "                    [--iterations K] [--runs R] [--no-c2c] [--output FILE]\n"
            "       mpirun -np N topsync-tune --mpi [--iterations K] [--runs R] [--output FILE]\n"
            "  --threads LIST    thread counts to tune, e.g. 2,8 (default: the cores)\n"
            "  --processes LIST  process counts to tune (default: the cores)\n"
            "  --bind WHAT       auto (default): threads round robin to cores, processes too\n"
            "                    unless they outnumber the cores (then unbound, as mpirun\n"
            "                    --oversubscribe leaves them); core; none\n"
            "  --iterations K    barriers per timed run (default 1000)\n"
            "  --runs R          timed runs per candidate; the mean of those but the\n"
            "                    smallest and largest (the plain mean below 3) (default 5)\n"
            "  --no-c2c          do not measure and store this machine's core-to-core table\n"
            "                    and miss overlap (topsync-bench c2c --mlp)\n"
            "  --output FILE     the tuning file (default: TOPSYNC_TUNING, else\n"
            "                    $XDG_CACHE_HOME/topsync/tuning-FINGERPRINT.json)\n"
            "  --mpi             under mpirun: tune MPI_Barrier of this job's ranks, and\n"
            "                    time MPI_Allreduce, MPI_Reduce and MPI_Bcast (8 B to 16 KiB)\n"
            "                    against the MPI's own for auto's choice per size\n"
            "Entries of other cases in the file are kept; a tuning file of another machine\n"
            "or format version, or a damaged one, is replaced (said on stderr); a file that\n"
            "is not a tuning file is never overwritten (exit 2), and the directory of\n"
            "--output FILE must exist.\n");
}

static int parse_counts(const char *option, const char *list, unsigned *out, unsigned *n)
{
    if (bench_check_list(option, list) < 0)
        return -1;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    *n = 0;
    for (char *save, *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        uint64_t v;
        if (*n == MAX_COUNTS || bench_parse_u64(w, &v, 1, 4096)) {
            fprintf(stderr, "topsync-tune: %s takes up to %d counts of 1..4096, not '%s'\n", option,
                    MAX_COUNTS, list);
            return -1;
        }
        out[(*n)++] = (unsigned)v;
    }
    return 0;
}

/* ---------------------------------------------------------------------- */
/* One case.                                                                */

/* One run of one candidate; negative on failure. */
static double one_run(const bench_topsync_arg *a, unsigned n, int processes, uint64_t warmup,
                      uint64_t iterations)
{
    bench_barrier bb = {
        a->algorithm, NULL, bench_topsync_create, bench_topsync_wait, bench_topsync_destroy, a, 0};
    topsync_barrier_options_t opts;
    bench_topsync_options(a, &opts);
    return processes ? bench_process_run(&opts, n, warmup, iterations, a->binding, NULL, 0)
                     : bench_thread_run(&bb, n, warmup, iterations, a->binding);
}

/*
 * Every candidate measured in turn, round after round (so that a drift of
 * the machine hits all alike), runs[c][r]; then the TOP fastest again with
 * three times the runs, still in turn, their figures replacing the first:
 * two candidates within the noise of the first pass are told apart by the
 * second. latency[c]: the protocol's figure, negative for a failed one.
 */
#define REFINE_TOP 4
static void race(bench_topsync_arg *cands, unsigned nc, unsigned n, int processes,
                 const struct tune_options *o, double *latency)
{
    uint64_t warmup = o->iterations / 10 ? o->iterations / 10 : 1;
    double(*runs)[BENCH_MAX_RUNS] = calloc(nc, sizeof *runs);
    for (unsigned c = 0; c < nc; c++)
        latency[c] = 0;
    for (unsigned r = 0; r < o->runs; r++)
        for (unsigned c = 0; c < nc; c++)
            if (latency[c] >= 0 &&
                (runs[c][r] = one_run(&cands[c], n, processes, warmup, o->iterations)) < 0)
                latency[c] = -1;
    for (unsigned c = 0; c < nc; c++)
        if (latency[c] >= 0)
            latency[c] = bench_protocol_summary(runs[c], o->runs);
    unsigned top[REFINE_TOP], ntop = bench_fastest(latency, nc, top, REFINE_TOP);
    unsigned more = 3 * o->runs > BENCH_MAX_RUNS ? BENCH_MAX_RUNS : 3 * o->runs;
    for (unsigned r = 0; r < more; r++)
        for (unsigned j = 0; j < ntop; j++)
            runs[top[j]][r] = one_run(&cands[top[j]], n, processes, warmup, o->iterations);
    for (unsigned j = 0; j < ntop; j++)
        latency[top[j]] = bench_protocol_summary(runs[top[j]], more);
    free(runs);
}

static int tune_case(topsync_tuning_t *tu, topsync_topology_t *t, unsigned n, int processes,
                     const struct tune_options *o)
{
    unsigned cores = topsync_topology_ncores(t);
    int bind = !strcmp(o->bind, "core") || (!strcmp(o->bind, "auto") && (!processes || n <= cores));
    bench_binding binding = {t, NULL, n};
    hwloc_bitmap_t *sets = calloc(n, sizeof *sets);
    if (!sets ||
        topsync_placement_compute(t, n, TOPSYNC_MAP_BY_CORE, TOPSYNC_BIND_TO_CORE, sets) < 0) {
        fprintf(stderr, "topsync-tune: %s\n", topsync_error_message());
        free(sets);
        return -1;
    }
    if (bind)
        binding.sets = sets;
    topsync_tuning_entry_t e;
    memset(&e, 0, sizeof e);
    e.participants = n;
    e.processes = processes;
    /* as topsync_barrier_create judges it: the participants against the
     * CPUs they are bound to, or this process's CPUs */
    hwloc_bitmap_t all = hwloc_bitmap_alloc();
    for (unsigned i = 0; i < n; i++)
        hwloc_bitmap_or(all, all, sets[i]);
    unsigned cpus = bind ? (unsigned)hwloc_bitmap_weight(all) : cores;
    hwloc_bitmap_free(all);
    e.oversubscribed = n > cpus;
    topsync_tuning_placement(t, n, (const hwloc_const_bitmap_t *)binding.sets, e.placement,
                             sizeof e.placement);
    char names[TOPSYNC_TUNING_MAX_CANDIDATES][96];
    int nc = topsync_tuning_candidates(t, n, (const hwloc_const_bitmap_t *)binding.sets, names,
                                       TOPSYNC_TUNING_MAX_CANDIDATES);
    topsync_wait_policy_t waits[2] = {e.oversubscribed ? TOPSYNC_WAIT_YIELD : TOPSYNC_WAIT_SPIN,
                                      TOPSYNC_WAIT_BLOCK};
    printf("%u %s, %s, placement %s: %d candidates x 2 wait policies\n", n,
           processes ? "processes" : "threads", e.oversubscribed ? "oversubscribed" : "one per CPU",
           e.placement, nc);
    fflush(stdout);
    bench_topsync_arg cands[2 * TOPSYNC_TUNING_MAX_CANDIDATES];
    double latency[2 * TOPSYNC_TUNING_MAX_CANDIDATES];
    unsigned ncand = 0;
    for (int c = 0; c < nc; c++)
        for (int w = 0; w < 2; w++)
            cands[ncand++] = (bench_topsync_arg){names[c], waits[w], &binding};
    race(cands, ncand, n, processes, o, latency);
    for (unsigned c = 0; c < ncand && e.nresults < TOPSYNC_TUNING_MAX_RESULTS; c++) {
        if (latency[c] <= 0)
            continue;
        topsync_tuning_result_t *r = &e.results[e.nresults++];
        snprintf(r->algorithm, sizeof r->algorithm, "%.95s", cands[c].algorithm);
        r->wait = cands[c].wait;
        r->latency_ns = latency[c];
    }
    for (unsigned i = 0; i < n; i++)
        hwloc_bitmap_free(sets[i]);
    free(sets);
    if (topsync_tuning_put(tu, &e) < 0) {
        fprintf(stderr, "topsync-tune: %s\n", topsync_error_message());
        return -1;
    }
    bench_print_fastest(tu, &e);
    printf("\n");
    return 0;
}

/* ---------------------------------------------------------------------- */

/* --mpi: the MPI benchmark of the MPI that started us tunes the job, with
 * this run's --iterations and --runs, into path. */
static int exec_mpi(const struct tune_options *o, const char *path)
{
    char self[4096];
    const char *impl;
    int rc = bench_mpi_sibling("topsync-tune", self, sizeof self, &impl);
    if (rc)
        return rc;
    char iterations[24], runs[16];
    snprintf(iterations, sizeof iterations, "%llu", (unsigned long long)o->iterations);
    snprintf(runs, sizeof runs, "%u", o->runs);
    char *args[] = {self, "--iterations", iterations, "--runs", runs, "--tune", (char *)path, NULL};
    execv(self, args);
    fprintf(stderr, "topsync-tune: cannot run %s: %s (built without %s?)\n", self, strerror(errno),
            impl);
    return 1;
}

int main(int argc, char **argv)
{
    cli_check_stdout_at_exit("topsync-tune");
    struct tune_options o = {.bind = "auto", .iterations = 1000, .runs = 5, .c2c = 1};
    int mpi = 0;
    const char *local_option = NULL; /* one that --mpi cannot take */
    enum {
        O_THREADS = 256,
        O_PROCESSES,
        O_BIND,
        O_ITER,
        O_RUNS,
        O_NOC2C,
        O_OUT,
        O_MPI,
        O_HELP,
        O_VERSION
    };
    static const struct option longopts[] = {{"threads", required_argument, 0, O_THREADS},
                                             {"processes", required_argument, 0, O_PROCESSES},
                                             {"bind", required_argument, 0, O_BIND},
                                             {"iterations", required_argument, 0, O_ITER},
                                             {"runs", required_argument, 0, O_RUNS},
                                             {"no-c2c", no_argument, 0, O_NOC2C},
                                             {"output", required_argument, 0, O_OUT},
                                             {"mpi", no_argument, 0, O_MPI},
                                             {"help", no_argument, 0, O_HELP},
                                             {"version", no_argument, 0, O_VERSION},
                                             {0, 0, 0, 0}};
    int c;
    uint64_t v;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case O_THREADS:
            local_option = "--threads";
            if (parse_counts("--threads", optarg, o.threads, &o.nthreads) < 0)
                return 2;
            break;
        case O_PROCESSES:
            local_option = "--processes";
            if (parse_counts("--processes", optarg, o.processes, &o.nprocesses) < 0)
                return 2;
            break;
        case O_BIND:
            if (strcmp(optarg, "auto") && strcmp(optarg, "core") && strcmp(optarg, "none")) {
                fprintf(stderr, "topsync-tune: --bind takes auto, core or none, not '%s'\n",
                        optarg);
                return 2;
            }
            o.bind = optarg;
            local_option = "--bind";
            break;
        case O_ITER:
            if (bench_parse_u64(optarg, &o.iterations, 10, 100000000)) {
                fprintf(stderr, "topsync-tune: --iterations takes 10..100000000, not '%s'\n",
                        optarg);
                return 2;
            }
            break;
        case O_RUNS:
            if (bench_parse_u64(optarg, &v, 1, BENCH_MAX_RUNS)) {
                fprintf(stderr, "topsync-tune: --runs takes 1..%d, not '%s'\n", BENCH_MAX_RUNS,
                        optarg);
                return 2;
            }
            o.runs = (unsigned)v;
            break;
        case O_NOC2C:
            o.c2c = 0;
            local_option = "--no-c2c";
            break;
        case O_OUT: o.output = optarg; break;
        case O_MPI: mpi = 1; break;
        case 'h':
        case O_HELP: usage(stdout); return 0;
        case O_VERSION: printf("topsync-tune (topsync) %s\n", topsync_version()); return 0;
        default: fprintf(stderr, "Try 'topsync-tune --help'.\n"); return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "topsync-tune: unexpected argument '%s'; try 'topsync-tune --help'\n",
                argv[optind]);
        return 2;
    }
    if (mpi && local_option) {
        fprintf(stderr,
                "topsync-tune: %s does not go with --mpi (mpirun chose the ranks and their "
                "binding; --mpi takes --iterations, --runs and --output); try "
                "'topsync-tune --help'\n",
                local_option);
        return 2;
    }
    if (topsync_environment_check() < 0) {
        fprintf(stderr, "topsync-tune: %s\n", topsync_error_message());
        return 2;
    }
    topsync_topology_t *t;
    int loaded = bench_topology_load("topsync-tune", &t);
    if (loaded)
        return loaded;
    char path[4096];
    if (o.output) {
        snprintf(path, sizeof path, "%s", o.output);
        /* the user's path: its directory must exist (only the default cache
         * directory is created) */
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", path);
        char *slash = strrchr(dir, '/');
        struct stat st;
        if (slash) {
            slash[slash == dir] = '\0';
            if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
                fprintf(stderr, "topsync-tune: --output %s: the directory %s does not exist\n",
                        path, dir);
                topsync_topology_destroy(t);
                return 2;
            }
        }
    } else if (topsync_tuning_path(t, path, sizeof path) < 0) {
        fprintf(stderr, "topsync-tune: %s; give --output FILE\n", topsync_error_message());
        topsync_topology_destroy(t);
        return 2;
    }
    /* before anything is measured: the file is one topsync-tune may write */
    int refused;
    topsync_tuning_t *tu = bench_tuning_open(t, path, &refused);
    if (!tu) {
        topsync_topology_destroy(t);
        return refused ? 2 : 1;
    }
    if (mpi) {
        topsync_tuning_destroy(tu);
        topsync_topology_destroy(t);
        return exec_mpi(&o, path);
    }
    unsigned cores = topsync_topology_ncores(t);
    if (!o.nthreads && !o.nprocesses) {
        o.threads[o.nthreads++] = cores;
        o.processes[o.nprocesses++] = cores;
    }
    printf("topsync-tune: %s, %u cores, fingerprint %s\n", topsync_topology_source(t), cores,
           topsync_tuning_machine_fingerprint(tu));
    if (o.c2c) {
        double *table;
        unsigned n;
        if (bench_c2c_table(t, 5000, 5, &table, &n) == 0) {
            if (topsync_tuning_set_c2c(tu, n, table) < 0)
                fprintf(stderr, "topsync-tune: %s\n", topsync_error_message());
            else
                printf("core-to-core table: %u CPUs measured\n", n);
            free(table);
        }
        bench_mlp overlap;
        if (bench_c2c_mlp(t, 64, 1000, &overlap) == 0) {
            if (topsync_tuning_set_mlp(tu, overlap.mlp, overlap.independent_ns) < 0)
                fprintf(stderr, "topsync-tune: %s\n", topsync_error_message());
            else
                printf("miss overlap: %.1f misses in flight (%.1f ns per line dependent, %.2f "
                       "independent)\n",
                       overlap.mlp, overlap.dependent_ns, overlap.independent_ns);
        }
    }
    int status = 0;
    for (unsigned i = 0; i < o.nthreads && !status; i++)
        status = tune_case(tu, t, o.threads[i], 0, &o);
    for (unsigned i = 0; i < o.nprocesses && !status; i++)
        status = tune_case(tu, t, o.processes[i], 1, &o);
    if (!status && topsync_tuning_write(tu, path) < 0) {
        fprintf(stderr, "topsync-tune: %s\n", topsync_error_message());
        status = 1;
    }
    if (!status)
        printf("wrote %s (%u entries)\n", path, topsync_tuning_count(tu));
    topsync_tuning_destroy(tu);
    topsync_topology_destroy(t);
    return status ? 1 : 0;
}
