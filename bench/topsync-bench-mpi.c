/*
 * topsync-bench-mpi-{openmpi,mpich}: `topsync-bench barrier --mpi`, run under
 * mpirun/mpiexec (topsync-bench execs the binary of the MPI it runs under).
 * The why: docs/design.md section 8.24.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include <topsync.h>
#include <topsync/mpi.h>

#include "bench.h"
#include "cli_output.h"
#include "binding/mpi_identity.h"

#define MAX_RUNS BENCH_MAX_RUNS

typedef int (*barrier_fn)(MPI_Comm);

static int rank, size;

/* Timed barriers on comm; this rank's mean latency (ns). No MPI call but
 * fn: another MPI operation between runs would wake the MPI's progress
 * machinery, whose busy polling (MPICH's, oversubscribed) then lands in the
 * next run. */
static double timed(barrier_fn fn, MPI_Comm comm, uint64_t warmup, uint64_t iterations)
{
    for (uint64_t i = 0; i < warmup; i++)
        fn(comm);
    uint64_t t0 = ts_monotonic_ns();
    for (uint64_t i = 0; i < iterations; i++)
        fn(comm);
    return (double)(ts_monotonic_ns() - t0) / (double)iterations;
}

static double max_over_ranks(double mine, MPI_Comm comm)
{
    double worst;
    PMPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, comm);
    return worst;
}

struct record {
    char name[96], resolved[96];
    const char *wait;
    double latency_ns, runs[MAX_RUNS];
    uint64_t iterations;
};

static void measure(barrier_fn fn, MPI_Comm comm, uint64_t iterations, unsigned runs,
                    uint64_t budget_ms, struct record *rec)
{
    double budget_ns = (double)budget_ms * 1e6;
    /* Probe, warm up for ~10 % of the budget, probe again (a fresh
     * communicator starts skewed), then choose K to fit the budget. */
    double probe = max_over_ranks(timed(fn, comm, 0, 3), comm);
    double warm = budget_ns / 10 / (probe > 0 ? probe : 1);
    uint64_t warm_k = warm < 3 ? 3 : warm > (double)iterations ? iterations : (uint64_t)warm;
    if (probe < 20e6 && warm_k < 100) /* a fast barrier whose probe caught the start-up */
        warm_k = 100 < iterations ? 100 : iterations;
    timed(fn, comm, 0, warm_k);
    probe = max_over_ranks(timed(fn, comm, 0, 3), comm);
    uint64_t k = iterations;
    double fit = budget_ns / (probe > 0 ? probe : 1);
    if (fit < (double)k)
        k = fit < 5 ? 5 : (uint64_t)fit;
    rec->iterations = k;
    /* A full-length warm-up absorbs what the probe's reduction stirred up. */
    timed(fn, comm, 0, k);
    double mine[MAX_RUNS];
    for (unsigned r = 0; r < runs; r++)
        mine[r] = timed(fn, comm, k / 10 + 1, k);
    PMPI_Allreduce(mine, rec->runs, (int)runs, MPI_DOUBLE, MPI_MAX, comm);
    rec->latency_ns = bench_protocol_summary(rec->runs, runs);
}

/* setenv(name, value), or unsetenv with value NULL; the old value in old
 * (*was_set false: it was unset). value may be old itself. */
static void swap_env(const char *name, const char *value, char *old, size_t len, bool *was_set)
{
    char wanted[128];
    snprintf(wanted, sizeof wanted, "%s", value ? value : "");
    const char *v = getenv(name);
    *was_set = v != NULL;
    snprintf(old, len, "%s", v ? v : "");
    if (value)
        setenv(name, wanted, 1);
    else
        unsetenv(name);
}

/* A duplicate of MPI_COMM_WORLD on which every call is the MPI's own
 * (TOPSYNC_BARRIER=mpi at its set-up). Not MPI_COMM_WORLD itself:
 * libtopsync-mpi sets that up in MPI_Init, so PMPI_Barrier on it is
 * topsync's, not the MPI's. */
static MPI_Comm own_comm(void)
{
    char old[128];
    bool was;
    swap_env("TOPSYNC_BARRIER", "mpi", old, sizeof old, &was);
    MPI_Comm c;
    PMPI_Comm_dup(MPI_COMM_WORLD, &c);
    const char *how = topsync_mpi_describe(c); /* sets it up while the variable says so */
    if (strcmp(how, "mpi")) {
        fprintf(stderr, "topsync-bench: the MPI's own communicator runs %s\n", how);
        PMPI_Abort(MPI_COMM_WORLD, 1);
    }
    swap_env("TOPSYNC_BARRIER", was ? old : NULL, old, sizeof old, &was);
    return c;
}

/* ---------------------------------------------------------------------- */
/* --tune: the collectives, per kind and size, topsync's against the MPI's  */
/* own in the same job (topsync_tuning_coll_entry_t).                       */

#define COLL_SMALLEST 8u
#define COLL_LARGEST 16384u
#define COLL_POINT_BUDGET_NS 2e8 /* per size and way: 36 points x 2 ways <= ~15 s */

static int coll_kind;
static int coll_count; /* doubles */
static double coll_send[COLL_LARGEST / sizeof(double)], coll_recv[COLL_LARGEST / sizeof(double)];

static int coll_call(MPI_Comm c)
{
    switch (coll_kind) {
    case TOPSYNC_COLL_ALLREDUCE:
        return MPI_Allreduce(coll_send, coll_recv, coll_count, MPI_DOUBLE, MPI_SUM, c);
    case TOPSYNC_COLL_REDUCE:
        return MPI_Reduce(coll_send, coll_recv, coll_count, MPI_DOUBLE, MPI_SUM, 0, c);
    default: return MPI_Bcast(coll_recv, coll_count, MPI_DOUBLE, 0, c);
    }
}

/* One call on c with known contributions: the result every rank (or the
 * root) must have. A tuner that timed wrong answers would be worse than
 * none. */
static void coll_verify(MPI_Comm c, const char *way)
{
    for (int i = 0; i < coll_count; i++) {
        coll_send[i] = rank + 1 + i;
        coll_recv[i] = rank == 0 ? 7.0 + i : -1.0;
    }
    coll_call(c);
    int bad = 0;
    for (int i = 0; i < coll_count; i++) {
        double want = coll_kind == TOPSYNC_COLL_BCAST
                          ? 7.0 + i
                          : (double)size * (size + 1) / 2 + (double)size * i;
        if ((coll_kind != TOPSYNC_COLL_REDUCE || rank == 0) && coll_recv[i] != want)
            bad = 1;
    }
    if (bad) {
        fprintf(stderr, "topsync-tune: %s's MPI_%s of %d doubles gave a wrong result on rank %d\n",
                way, topsync_coll_kind_name((topsync_coll_kind_t)coll_kind), coll_count, rank);
        PMPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static void tune_collectives(topsync_tuning_coll_entry_t *ce, uint64_t iterations, unsigned runs)
{
    /* topsync's: every size served (the limit given, auto out of the way) */
    char old[64];
    bool was;
    char largest[16];
    snprintf(largest, sizeof largest, "%u", COLL_LARGEST);
    swap_env("TOPSYNC_COLL_MAX_BYTES", largest, old, sizeof old, &was);
    MPI_Comm ours;
    PMPI_Comm_dup(MPI_COMM_WORLD, &ours);
    topsync_mpi_describe(ours); /* set up now */
    swap_env("TOPSYNC_COLL_MAX_BYTES", was ? old : NULL, old, sizeof old, &was);
    MPI_Comm own = own_comm();
    MPI_Comm ways[2] = {ours, own};
    for (int kind = 0; kind < TOPSYNC_COLL_KINDS; kind++) {
        coll_kind = kind;
        for (size_t bytes = COLL_SMALLEST; bytes <= COLL_LARGEST; bytes *= 2) {
            coll_count = (int)(bytes / sizeof(double));
            coll_verify(ours, "topsync");
            coll_verify(own, "the MPI");
            double probe = 0;
            for (int w = 0; w < 2; w++) {
                double p = max_over_ranks(timed(coll_call, ways[w], 3, 3), MPI_COMM_WORLD);
                probe = p > probe ? p : probe;
            }
            uint64_t k = iterations;
            double fit = COLL_POINT_BUDGET_NS / (runs * (probe > 0 ? probe : 1));
            if (fit < (double)k)
                k = fit < 5 ? 5 : (uint64_t)fit;
            double mine[2][MAX_RUNS], all[2][MAX_RUNS];
            for (int w = 0; w < 2; w++)
                timed(coll_call, ways[w], 0, k / 10 + 1);
            for (unsigned r = 0; r < runs; r++) /* interleaved: the same noise for both */
                for (int w = 0; w < 2; w++)
                    mine[w][r] = timed(coll_call, ways[w], 0, k);
            PMPI_Allreduce(mine, all, 2 * MAX_RUNS, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            topsync_tuning_coll_point_t *p = &ce->points[kind][ce->npoints[kind]++];
            p->bytes = bytes;
            p->topsync_ns = bench_protocol_summary(all[0], runs);
            p->own_ns = bench_protocol_summary(all[1], runs);
        }
    }
    PMPI_Comm_free(&ours);
    PMPI_Comm_free(&own);
}

static void print_collectives(const topsync_tuning_coll_entry_t *ce)
{
    printf("collectives under %s, topsync / the MPI's own:\n", ce->mpi);
    for (int kind = 0; kind < TOPSYNC_COLL_KINDS; kind++) {
        printf("  %-9s", topsync_coll_kind_name((topsync_coll_kind_t)kind));
        for (unsigned i = 0; i < ce->npoints[kind]; i++) {
            const topsync_tuning_coll_point_t *p = &ce->points[kind][i];
            printf(" %zu B %.2fx%s", p->bytes, p->topsync_ns / p->own_ns,
                   i + 1 < ce->npoints[kind] ? "," : "\n");
        }
    }
}

/* ---------------------------------------------------------------------- */
/* --tune FILE (topsync-tune --mpi): the job's case, every candidate.       */

/* Every rank's binding, as the MPI library gathers them at set-up; NULL
 * on ranks other than 0 (and on failure). */
static hwloc_bitmap_t *gather_bindings(topsync_topology_t *t)
{
    char *mine = NULL;
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    hwloc_topology_t h = topsync_topology_hwloc(t);
    if (hwloc_get_cpubind(h, set, HWLOC_CPUBIND_PROCESS) < 0)
        hwloc_bitmap_copy(set, hwloc_topology_get_topology_cpuset(h));
    hwloc_bitmap_asprintf(&mine, set);
    hwloc_bitmap_free(set);
    int len = (int)strlen(mine) + 1;
    int *lens = calloc((size_t)size, sizeof *lens), *displs = calloc((size_t)size, sizeof *displs);
    PMPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD);
    long total = 0;
    for (int i = 0; rank == 0 && i < size; i++) {
        displs[i] = (int)total;
        total += lens[i];
    }
    char *all = rank == 0 ? calloc((size_t)total + 1, 1) : NULL;
    PMPI_Gatherv(mine, len, MPI_CHAR, all, lens, displs, MPI_CHAR, 0, MPI_COMM_WORLD);
    free(mine);
    hwloc_bitmap_t *sets = NULL;
    if (rank == 0) {
        sets = calloc((size_t)size, sizeof *sets);
        for (int i = 0; i < size; i++) {
            sets[i] = hwloc_bitmap_alloc();
            hwloc_bitmap_sscanf(sets[i], all + displs[i]);
        }
    }
    free(all);
    free(lens);
    free(displs);
    return sets;
}

static int tune(const char *path, uint64_t iterations, unsigned runs, uint64_t budget_ms)
{
    MPI_Comm node;
    int node_size;
    PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    PMPI_Comm_size(node, &node_size);
    PMPI_Comm_free(&node);
    if (node_size != size) {
        if (rank == 0)
            fprintf(stderr,
                    "topsync-tune: --mpi tunes one node: run it with every rank on this "
                    "node (%d of %d are)\n",
                    node_size, size);
        return 2;
    }
    topsync_topology_t *t = NULL;
    if (bench_topology_load("topsync-tune", &t))
        PMPI_Abort(MPI_COMM_WORLD, 2);
    hwloc_bitmap_t *sets = gather_bindings(t);
    /* rank 0 decides the case and the candidates, every rank measures */
    topsync_tuning_entry_t e;
    memset(&e, 0, sizeof e);
    char list[TOPSYNC_TUNING_MAX_CANDIDATES * 100] = "";
    if (rank == 0) {
        hwloc_bitmap_t all = hwloc_bitmap_alloc();
        for (int i = 0; i < size; i++)
            hwloc_bitmap_or(all, all, sets[i]);
        e.participants = (unsigned)size;
        e.processes = 1;
        e.oversubscribed = size > hwloc_bitmap_weight(all);
        hwloc_bitmap_free(all);
        topsync_tuning_placement(t, (unsigned)size, (const hwloc_const_bitmap_t *)sets, e.placement,
                                 sizeof e.placement);
        char names[TOPSYNC_TUNING_MAX_CANDIDATES][96];
        int nc = topsync_tuning_candidates(t, (unsigned)size, (const hwloc_const_bitmap_t *)sets,
                                           names, TOPSYNC_TUNING_MAX_CANDIDATES);
        for (int c = 0; c < nc; c++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s ", names[c]);
        printf("%d processes under %s, %s, placement %s: %d candidates x 2 wait policies\n", size,
               TOPSYNC_BENCH_MPI_IMPL, e.oversubscribed ? "oversubscribed" : "one per CPU",
               e.placement, nc);
        fflush(stdout);
    }
    PMPI_Bcast(&e, sizeof e, MPI_BYTE, 0, MPI_COMM_WORLD);
    PMPI_Bcast(list, sizeof list, MPI_CHAR, 0, MPI_COMM_WORLD);
    const char *waits[2] = {e.oversubscribed ? "yield" : "spin", "block"};
    /* Every candidate on a communicator of its own (TOPSYNC_BARRIER and
     * TOPSYNC_WAIT are read at set-up), measured in turn, round after
     * round, then the four fastest again with three times the runs, as
     * topsync-tune does for threads (race()). */
    MPI_Comm comms[2 * TOPSYNC_TUNING_MAX_CANDIDATES];
    unsigned nc = 0;
    for (char *save, *name = strtok_r(list, " ", &save); name; name = strtok_r(NULL, " ", &save))
        for (int w = 0; w < 2; w++) {
            setenv("TOPSYNC_BARRIER", name, 1);
            setenv("TOPSYNC_WAIT", waits[w], 1);
            PMPI_Comm_dup(MPI_COMM_WORLD, &comms[nc]);
            topsync_mpi_barrier(comms[nc]); /* set up now: the variables are read here */
            topsync_tuning_result_t *out = &e.results[nc++];
            snprintf(out->algorithm, sizeof out->algorithm, "%s", name);
            topsync_wait_policy_parse(waits[w], &out->wait);
        }
    e.nresults = nc;
    uint64_t warmup = iterations / 10 + 1;
    for (unsigned c = 0; c < nc; c++)
        timed(topsync_mpi_barrier, comms[c], 0, warmup);
    static double mine[2 * TOPSYNC_TUNING_MAX_CANDIDATES][MAX_RUNS];
    static double all[2 * TOPSYNC_TUNING_MAX_CANDIDATES][MAX_RUNS];
    for (unsigned r = 0; r < runs; r++)
        for (unsigned c = 0; c < nc; c++)
            mine[c][r] = timed(topsync_mpi_barrier, comms[c], warmup, iterations);
    PMPI_Allreduce(mine, all, (int)(sizeof mine / sizeof(double)), MPI_DOUBLE, MPI_MAX,
                   MPI_COMM_WORLD);
    for (unsigned c = 0; c < nc; c++)
        e.results[c].latency_ns = bench_protocol_summary(all[c], runs);
    double latency[2 * TOPSYNC_TUNING_MAX_CANDIDATES];
    for (unsigned c = 0; c < nc; c++)
        latency[c] = e.results[c].latency_ns;
    /* identical on every rank: the same reduced figures */
    unsigned top[4], ntop = bench_fastest(latency, nc, top, 4);
    unsigned more = 3 * runs > MAX_RUNS ? MAX_RUNS : 3 * runs;
    for (unsigned r = 0; r < more; r++)
        for (unsigned j = 0; j < ntop; j++)
            mine[top[j]][r] = timed(topsync_mpi_barrier, comms[top[j]], warmup, iterations);
    PMPI_Allreduce(mine, all, (int)(sizeof mine / sizeof(double)), MPI_DOUBLE, MPI_MAX,
                   MPI_COMM_WORLD);
    for (unsigned j = 0; j < ntop; j++)
        e.results[top[j]].latency_ns = bench_protocol_summary(all[top[j]], more);
    for (unsigned c = 0; c < nc; c++)
        PMPI_Comm_free(&comms[c]);
    struct record native;
    memset(&native, 0, sizeof native);
    MPI_Comm own = own_comm();
    measure(PMPI_Barrier, own, iterations, runs, budget_ms, &native);
    PMPI_Comm_free(&own);
    double peer = native.latency_ns;
    topsync_tuning_coll_entry_t ce;
    memset(&ce, 0, sizeof ce);
    ce.participants = e.participants;
    ce.oversubscribed = e.oversubscribed;
    snprintf(ce.placement, sizeof ce.placement, "%s", e.placement);
    ts_mpi_identity(ce.mpi, sizeof ce.mpi);
    tune_collectives(&ce, iterations, runs);
    int status = 0;
    if (rank == 0) {
        int refused;
        topsync_tuning_t *tu = bench_tuning_open(t, path, &refused);
        if (!tu) {
            status = 1;
        } else if (topsync_tuning_put(tu, &e) < 0 || topsync_tuning_put_coll(tu, &ce) < 0 ||
                   topsync_tuning_write(tu, path) < 0) {
            fprintf(stderr, "topsync-tune: %s\n", topsync_error_message());
            status = 1;
        } else {
            bench_print_fastest(tu, &e);
            printf("; %s's own barrier %.0f ns\n", TOPSYNC_BENCH_MPI_IMPL, peer);
            print_collectives(&ce);
            printf("wrote %s (%u entries, %u of collectives)\n", path, topsync_tuning_count(tu),
                   topsync_tuning_coll_count(tu));
        }
        topsync_tuning_destroy(tu);
        for (int i = 0; i < size; i++)
            hwloc_bitmap_free(sets[i]);
        free(sets);
    }
    topsync_topology_destroy(t);
    PMPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return status;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    cli_check_stdout_at_exit("topsync-bench");
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);

    const char *algorithm = "all", *wait = NULL, *peer_name = "peer:mpi", *label = "";
    const char *output = NULL, *tune_path = NULL;
    uint64_t iterations = 1000, budget_ms = 5000;
    unsigned runs = 5;
    int json = 0;
    enum {
        O_ALG = 256,
        O_WAIT,
        O_ITER,
        O_RUNS,
        O_BUDGET,
        O_PEER,
        O_LABEL,
        O_JSON,
        O_OUT,
        O_MPI,
        O_HELP,
        O_TUNE
    };
    static const struct option longopts[] = {{"algorithm", required_argument, 0, O_ALG},
                                             {"wait", required_argument, 0, O_WAIT},
                                             {"iterations", required_argument, 0, O_ITER},
                                             {"runs", required_argument, 0, O_RUNS},
                                             {"budget-ms", required_argument, 0, O_BUDGET},
                                             {"peer-name", required_argument, 0, O_PEER},
                                             {"label", required_argument, 0, O_LABEL},
                                             {"json", no_argument, 0, O_JSON},
                                             {"output", required_argument, 0, O_OUT},
                                             {"mpi", no_argument, 0, O_MPI},
                                             {"help", no_argument, 0, O_HELP},
                                             {"tune", required_argument, 0, O_TUNE},
                                             {0, 0, 0, 0}};
    int c, bad = 0;
    uint64_t v = 0;
    /* argv[1] may be "barrier" (as passed on by topsync-bench) */
    int first = argc > 1 && !strcmp(argv[1], "barrier") ? 1 : 0;
    optind = 1 + first;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case O_ALG: algorithm = optarg; break;
        case O_WAIT: wait = optarg; break;
        case O_ITER:
            if (bench_parse_u64(optarg, &iterations, 1, UINT64_MAX / 2)) {
                if (rank == 0)
                    fprintf(stderr,
                            "topsync-bench: --iterations takes a positive number, not "
                            "'%s'\n",
                            optarg);
                bad = 1;
            }
            break;
        case O_RUNS:
            if (bench_parse_u64(optarg, &v, 1, MAX_RUNS)) {
                if (rank == 0)
                    fprintf(stderr, "topsync-bench: --runs takes 1 to %d, not '%s'\n", MAX_RUNS,
                            optarg);
                bad = 1;
            }
            runs = (unsigned)v;
            break;
        case O_BUDGET:
            if (bench_parse_u64(optarg, &budget_ms, 1, 3600000)) {
                if (rank == 0)
                    fprintf(stderr, "topsync-bench: --budget-ms takes 1 to 3600000, not '%s'\n",
                            optarg);
                bad = 1;
            }
            break;
        case O_PEER: peer_name = optarg; break;
        case O_LABEL: label = optarg; break;
        case O_JSON: json = 1; break;
        case O_OUT: output = optarg; break;
        case O_MPI: break;
        case O_TUNE: tune_path = optarg; break;
        case 'h':
        case O_HELP:
            if (rank == 0)
                bench_mpi_usage(stdout);
            MPI_Finalize();
            return 0;
        default: /* getopt named the option */ bad = 2;
        }
    }
    if (!bad && optind < argc) {
        if (rank == 0)
            fprintf(stderr, "topsync-bench: unexpected argument '%s'\n", argv[optind]);
        bad = 1;
    }
    topsync_wait_policy_t policy;
    if (!bad && wait && topsync_wait_policy_parse(wait, &policy) < 0) {
        if (rank == 0)
            fprintf(stderr, "topsync-bench: %s\n", topsync_error_message());
        bad = 1;
    }
    if (!bad && strcmp(algorithm, "all") && strcmp(algorithm, "none") &&
        topsync_barrier_algorithm_validate(algorithm) < 0) {
        if (rank == 0)
            fprintf(stderr, "topsync-bench: %s\n", topsync_error_message());
        bad = 1;
    }
    /* before the measurement; every rank learns it, so that all stop */
    if (!bad && output && rank == 0 &&
        cli_output_check("topsync-bench", output, CLI_OUTPUT_JSON, NULL))
        bad = 3;
    PMPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (bad == 3) {
        MPI_Finalize();
        return 1;
    }
    if (bad) {
        if (rank == 0)
            fprintf(stderr, "Try 'topsync-bench barrier --mpi --help'.\n");
        MPI_Finalize();
        return 2;
    }
    if (tune_path) {
        int status = tune(tune_path, iterations, runs, budget_ms);
        MPI_Finalize();
        return status;
    }
    if (wait)
        setenv("TOPSYNC_WAIT", wait, 1);

    static const char *const all[] = {"auto",
                                      "sense-reversing",
                                      "sense-reversing-counter",
                                      "sense-reversing-gr",
                                      "combining-tree",
                                      "mcs",
                                      "tournament",
                                      "dissemination",
                                      "topo",
                                      "topo/tree"};
    const char *const *names = all;
    size_t nnames = sizeof all / sizeof all[0];
    if (!strcmp(algorithm, "none"))
        nnames = 0;
    else if (strcmp(algorithm, "all") != 0) {
        names = &algorithm;
        nnames = 1;
    }
    struct record *recs = calloc(nnames + 1, sizeof *recs);
    size_t nrec = 0;
    if (nnames) {
        /* An untimed communicator first: the job's first barriers pay for
         * its start (page faults, the launcher's last messages), which
         * would land on whichever algorithm comes first. */
        setenv("TOPSYNC_BARRIER", names[0], 1);
        MPI_Comm warm;
        PMPI_Comm_dup(MPI_COMM_WORLD, &warm);
        struct record scratch;
        measure(topsync_mpi_barrier, warm, iterations, 1, budget_ms, &scratch);
        PMPI_Comm_free(&warm);
    }
    for (size_t i = 0; i < nnames; i++) {
        setenv("TOPSYNC_BARRIER", names[i], 1);
        MPI_Comm comm;
        PMPI_Comm_dup(MPI_COMM_WORLD, &comm);
        struct record *r = &recs[nrec++];
        snprintf(r->name, sizeof r->name, "%s", names[i]);
        snprintf(r->resolved, sizeof r->resolved, "%s", topsync_mpi_describe(comm));
        r->wait = wait ? wait : "block";
        measure(topsync_mpi_barrier, comm, iterations, runs, budget_ms, r);
        PMPI_Comm_free(&comm);
    }
    {
        struct record *r = &recs[nrec++];
        snprintf(r->name, sizeof r->name, "%s", peer_name);
        r->wait = "native";
        MPI_Comm own = own_comm();
        measure(PMPI_Barrier, own, iterations, runs, budget_ms, r);
        PMPI_Comm_free(&own);
    }

    int status = 0;
    if (rank == 0) {
        FILE *outs[2] = {json ? stdout : NULL, NULL};
        cli_output_t out;
        if (output) {
            if (cli_output_open(&out, "topsync-bench", output, CLI_OUTPUT_JSON, NULL))
                PMPI_Abort(MPI_COMM_WORLD, 1);
            outs[1] = out.f;
        }
        for (int o = 0; o < 2; o++) {
            FILE *f = outs[o];
            if (!f)
                continue;
            fprintf(f, "[\n");
            for (size_t i = 0; i < nrec; i++) {
                struct record *r = &recs[i];
                fprintf(f,
                        "  {\"algorithm\": \"%s\", \"participants\": %d, \"wait\": \"%s\", "
                        "\"latency_ns\": %.1f, \"median_ns\": %.1f, \"iterations\": %llu, "
                        "\"mpi\": \"%s\", \"label\": \"%s\", \"runs_ns\": [",
                        r->name, size, r->wait, r->latency_ns, bench_median(r->runs, runs),
                        (unsigned long long)r->iterations, TOPSYNC_BENCH_MPI_IMPL, label);
                for (unsigned k = 0; k < runs; k++)
                    fprintf(f, "%s%.1f", k ? ", " : "", r->runs[k]);
                fprintf(f, "]%s%s%s}%s\n", r->resolved[0] ? ", \"resolved\": \"" : "", r->resolved,
                        r->resolved[0] ? "\"" : "", i + 1 < nrec ? "," : "");
            }
            fprintf(f, "]\n");
        }
        if (outs[1] && cli_output_close(&out))
            status = 1;
        if (!json) {
            double peer = recs[nrec - 1].latency_ns;
            char words[160];
            printf("MPI_Barrier latency, %d ranks, %s%s%s, %u runs: the slowest rank's mean per "
                   "run; of the runs, %s\n\n",
                   size, TOPSYNC_BENCH_MPI_IMPL, *label ? " " : "", label, runs,
                   bench_protocol_words(runs, words, sizeof words));
            printf("  %-24s %-28s %12s %10s %8s %10s\n", "algorithm", "resolved", "latency ns",
                   "vs MPI", "iters", "median ns");
            for (size_t i = 0; i < nrec; i++)
                printf("  %-24s %-28s %12.1f %9.4fx %8llu %10.1f\n", recs[i].name, recs[i].resolved,
                       recs[i].latency_ns, recs[i].latency_ns / peer,
                       (unsigned long long)recs[i].iterations, bench_median(recs[i].runs, runs));
        }
    }
    free(recs);
    MPI_Finalize();
    return status;
}
