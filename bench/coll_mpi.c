/*
 * topsync-bench-coll-mpi-{openmpi,mpich}: `topsync-bench allreduce|reduce|
 * bcast --mpi` under mpirun/mpiexec. A plain MPI program: natively it
 * times the MPI's own collective, with libtopsync-mpi preloaded topsync's
 * (it says which it ran); scripts/coll_compare.sh runs both, interleaved.
 * Per size: R runs of I timed calls after a warm-up, each run's figure the
 * max over ranks of the mean per call, summarized over runs (design.md
 * section 4). Sums of doubles (4 bytes: of an int), bcast from rank 0.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "bench.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *op = argc > 1 ? argv[1] : "";
    int which = !strcmp(op, "allreduce") ? 0
                : !strcmp(op, "reduce")  ? 1
                : !strcmp(op, "bcast")   ? 2
                                         : -1;
    uint64_t iterations = 10000, runs = 5;
    const char *sizes = "4,8,64,1024,2048", *label = "";
    int json = 0, bad = which < 0;
    enum { O_SIZES = 256, O_ITER, O_RUNS, O_JSON, O_LABEL, O_MPI, O_HELP };
    static const struct option longopts[] = {
        {"sizes", required_argument, 0, O_SIZES}, {"iterations", required_argument, 0, O_ITER},
        {"runs", required_argument, 0, O_RUNS},   {"json", no_argument, 0, O_JSON},
        {"label", required_argument, 0, O_LABEL}, {"mpi", no_argument, 0, O_MPI},
        {"help", no_argument, 0, O_HELP},         {0, 0, 0, 0}};
    int c;
    optind = 2;
    while (!bad && (c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case O_SIZES: sizes = optarg; break;
        case O_ITER: bad = bench_parse_u64(optarg, &iterations, 1, UINT64_MAX / 4) != 0; break;
        case O_RUNS: bad = bench_parse_u64(optarg, &runs, 1, BENCH_MAX_RUNS) != 0; break;
        case O_JSON: json = 1; break;
        case O_LABEL: label = optarg; break;
        case O_MPI: break;
        case 'h':
        case O_HELP:
            if (rank == 0)
                printf("usage: mpirun -np N topsync-bench allreduce|reduce|bcast --mpi [--sizes "
                       "LIST]\n           [--iterations I] [--runs R] [--json] [--label TEXT]\n"
                       "  Times the MPI's MPI_Allreduce/MPI_Reduce/MPI_Bcast natively, or\n"
                       "  topsync's with libtopsync-mpi preloaded (scripts/coll_compare.sh\n"
                       "  runs both).\n");
            MPI_Finalize();
            return 0;
        default: bad = 1;
        }
    }
    size_t list[64];
    unsigned nsizes = 0;
    for (const char *s = sizes; !bad && *s && nsizes < 64;) {
        char word[32];
        size_t len = strcspn(s, ",");
        snprintf(word, sizeof word, "%.*s", (int)(len < 31 ? len : 31), s);
        uint64_t v;
        bad = bench_parse_u64(word, &v, 4, 1 << 20) != 0;
        list[nsizes++] = (size_t)v;
        s += len + (s[len] == ',');
    }
    if (bad) {
        if (rank == 0)
            fprintf(stderr, "topsync-bench: bad arguments (an op allreduce|reduce|bcast, then "
                            "--sizes 4..1048576 bytes, --iterations, --runs 1..32)\n");
        MPI_Finalize();
        return 2;
    }
    /* libtopsync-mpi preloaded (or linked) defines topsync_mpi_describe */
    const char *(*describe)(MPI_Comm) =
        (const char *(*)(MPI_Comm))dlsym(RTLD_DEFAULT, "topsync_mpi_describe");
    const char *impl = describe ? "topsync" : "mpi";
    if (rank == 0 && !json)
        printf("# MPI_%s%s, %d ranks, %s; ns per call, %s\n",
               which == 0   ? "Allreduce"
               : which == 1 ? "Reduce"
                            : "Bcast",
               describe ? " (libtopsync-mpi)" : " (the MPI's own)", size, label,
               "max over ranks of the mean, summarized over runs");
    if (rank == 0 && json)
        printf("[");
    size_t most = list[0];
    for (unsigned i = 0; i < nsizes; i++)
        most = list[i] > most ? list[i] : most;
    double *send = calloc(most / 8 + 1, sizeof(double)),
           *recv = calloc(most / 8 + 1, sizeof(double));
    for (unsigned si = 0; si < nsizes; si++) {
        size_t bytes = list[si];
        int count = bytes >= 8 ? (int)(bytes / 8) : 1;
        MPI_Datatype dt = bytes >= 8 ? MPI_DOUBLE : MPI_INT;
        double results[BENCH_MAX_RUNS];
        for (unsigned r = 0; r < runs; r++) {
            uint64_t t0 = 0, warm = iterations / 10 + 1;
            for (uint64_t k = 0; k < warm + iterations; k++) {
                if (k == warm)
                    t0 = ts_monotonic_ns();
                if (which == 0)
                    MPI_Allreduce(send, recv, count, dt, MPI_SUM, MPI_COMM_WORLD);
                else if (which == 1)
                    MPI_Reduce(send, recv, count, dt, MPI_SUM, 0, MPI_COMM_WORLD);
                else
                    MPI_Bcast(send, count, dt, 0, MPI_COMM_WORLD);
            }
            double mine = (double)(ts_monotonic_ns() - t0) / (double)iterations, worst = 0;
            MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            results[r] = worst;
        }
        double ns = bench_protocol_summary(results, (unsigned)runs);
        if (rank == 0) {
            if (json) {
                printf("%s\n {\"op\": \"%s\", \"impl\": \"%s\", \"bytes\": %zu, \"np\": %d, "
                       "\"label\": \"%s\", \"ns\": %.1f, \"runs\": [",
                       si ? "," : "", op, impl, bytes, size, label, ns);
                for (unsigned r = 0; r < runs; r++)
                    printf("%s%.1f", r ? ", " : "", results[r]);
                printf("]}");
            } else {
                printf("%8zu B  %-8s %10.1f ns\n", bytes, impl, ns);
            }
            fflush(stdout);
        }
    }
    if (rank == 0 && json)
        printf("\n]\n");
    free(send);
    free(recv);
    MPI_Finalize();
    return 0;
}
