/*
 * The cost of the MPI path itself (issue 24 item 6, docs/results.md): in
 * one job on one node, blocks of MPI_Barrier(MPI_COMM_WORLD), served by a
 * preloaded libtopsync-mpi, alternate with blocks of the bare topsync
 * barrier (libtopsync, same algorithm, default options) between the same
 * ranks on a segment of their own. Both see the same placement and load,
 * so their difference is what the interposition adds: the communicator
 * lookup, the checks, the timeout and idle-hook frame.
 *
 * Prints one line: the algorithm, then medians over ROUNDS of each
 * block's mean latency (the slowest rank's), in ns: MPI_Barrier, bare,
 * and the median of the per-round differences. Not built by CMake (one
 * binary per MPI): scripts/mpi_path_cost.sh compiles it with each MPI's
 * mpicc and runs it.
 *
 *   usage: mpi_path_cost ITERATIONS ROUNDS   (run preloaded, one node)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <topsync.h>

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int compare(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, compare);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, node_size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long iterations = argc > 1 ? atol(argv[1]) : 0, rounds = argc > 2 ? atol(argv[2]) : 0;
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &node_size);
    /* the preloaded library names the algorithm it serves the world with */
    const char *(*describe)(MPI_Comm) =
        (const char *(*)(MPI_Comm))dlsym(RTLD_DEFAULT, "topsync_mpi_describe");
    if (iterations < 1 || rounds < 1 || rounds > 1000 || node_size != size || !describe) {
        if (rank == 0)
            fprintf(stderr,
                    "usage: mpi_path_cost ITERATIONS ROUNDS (1..1000), every rank on one "
                    "node, libtopsync-mpi preloaded%s\n",
                    describe ? "" : " (it is not)");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Barrier(MPI_COMM_WORLD); /* the world's set-up */
    char algorithm[96];
    snprintf(algorithm, sizeof algorithm, "%s", describe(MPI_COMM_WORLD));
    if (strcmp(algorithm, "mpi") == 0) {
        if (rank == 0)
            fprintf(stderr, "mpi_path_cost: the library serves this job with PMPI_Barrier\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* the bare barrier: the same algorithm on a segment of our own, told
     * the machine and the ranks' bindings as the library tells its own */
    topsync_topology_t *machine;
    if (topsync_topology_load(&machine) < 0) {
        fprintf(stderr, "mpi_path_cost: %s\n", topsync_error_message());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    hwloc_topology_t h = topsync_topology_hwloc(machine);
    enum { LIST = 1024 };
    char *lists = calloc((size_t)size, LIST), mine[LIST];
    hwloc_bitmap_t *sets = calloc((size_t)size, sizeof *sets), bound = hwloc_bitmap_alloc();
    hwloc_get_cpubind(h, bound, HWLOC_CPUBIND_PROCESS);
    hwloc_bitmap_list_snprintf(mine, sizeof mine, bound);
    MPI_Allgather(mine, LIST, MPI_CHAR, lists, LIST, MPI_CHAR, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++) {
        sets[r] = hwloc_bitmap_alloc();
        hwloc_bitmap_list_sscanf(sets[r], lists + (size_t)r * LIST);
    }
    topsync_barrier_options_t o;
    topsync_barrier_options_init(&o);
    o.algorithm = algorithm;
    o.process_shared = 1;
    o.topology = machine;
    o.cpusets = (const hwloc_const_bitmap_t *)sets;
    size_t bytes;
    char name[64];
    if (topsync_barrier_segment_size((unsigned)size, &o, &bytes) < 0) {
        fprintf(stderr, "mpi_path_cost: %s\n", topsync_error_message());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int id = (int)getpid();
    MPI_Bcast(&id, 1, MPI_INT, 0, MPI_COMM_WORLD);
    snprintf(name, sizeof name, "/topsync-path-cost-%d", id);
    int fd = rank == 0 ? shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600) : -1;
    if (rank == 0 && (fd < 0 || ftruncate(fd, (off_t)bytes) != 0)) {
        perror("mpi_path_cost: shm_open");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != 0 && (fd = shm_open(name, O_RDWR, 0)) < 0) {
        perror("mpi_path_cost: shm_open");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    void *segment = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    topsync_barrier_t *bare;
    if (segment == MAP_FAILED ||
        topsync_barrier_attach(&bare, (unsigned)size, &o, segment, bytes, (unsigned)rank) < 0) {
        fprintf(stderr, "mpi_path_cost: %s\n", topsync_error_message());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Barrier(MPI_COMM_WORLD); /* every rank attached */
    if (rank == 0)
        shm_unlink(name);
    double *mpi = calloc((size_t)rounds, sizeof *mpi), *raw = calloc((size_t)rounds, sizeof *raw);
    double *diff = calloc((size_t)rounds, sizeof *diff);
    for (long i = 0; i < iterations; i++) { /* warm both up */
        MPI_Barrier(MPI_COMM_WORLD);
        topsync_barrier_wait(bare, (unsigned)rank);
    }
    for (long r = 0; r < rounds; r++) {
        uint64_t t0 = now_ns();
        for (long i = 0; i < iterations; i++)
            MPI_Barrier(MPI_COMM_WORLD);
        uint64_t t1 = now_ns();
        for (long i = 0; i < iterations; i++)
            topsync_barrier_wait(bare, (unsigned)rank);
        uint64_t t2 = now_ns();
        mpi[r] = (double)(t1 - t0) / (double)iterations;
        raw[r] = (double)(t2 - t1) / (double)iterations;
    }
    /* the slowest rank's figure of each round, as the benchmarks report */
    MPI_Allreduce(MPI_IN_PLACE, mpi, (int)rounds, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, raw, (int)rounds, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    for (long r = 0; r < rounds; r++)
        diff[r] = mpi[r] - raw[r];
    if (rank == 0)
        printf("%s %.1f %.1f %.1f\n", algorithm, median(mpi, (int)rounds), median(raw, (int)rounds),
               median(diff, (int)rounds));
    topsync_barrier_destroy(bare);
    munmap(segment, bytes);
    MPI_Finalize();
    return 0;
}
