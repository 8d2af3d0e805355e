#define _POSIX_C_SOURCE 200809L
/* The GNU OpenMP peer: `#pragma omp barrier` in one parallel region, run in
 * a child process (bench.h, bench_omp_runs). */
#include <stdbool.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

#ifdef _OPENMP
#include <omp.h>

static int omp_runs_here(unsigned n, uint64_t warmup, uint64_t iterations, unsigned runs,
                         void (*bind)(unsigned rank, void *ctx), void *ctx, double *latency_ns)
{
    double *per_thread = calloc(n, sizeof *per_thread);
    if (!per_thread)
        return -1;
    omp_set_dynamic(0);
#pragma omp parallel num_threads(n)
    {
        unsigned rank = (unsigned)omp_get_thread_num();
        bind(rank, ctx);
        for (unsigned run = 0; run < runs; run++) {
            for (uint64_t i = 0; i < warmup; i++) {
#pragma omp barrier
            }
            uint64_t t0 = ts_monotonic_ns();
            for (uint64_t i = 0; i < iterations; i++) {
#pragma omp barrier
            }
            per_thread[rank] = (double)(ts_monotonic_ns() - t0) / (double)iterations;
#pragma omp barrier
#pragma omp single
            {
                double worst = 0;
                for (unsigned t = 0; t < n; t++)
                    if (per_thread[t] > worst)
                        worst = per_thread[t];
                latency_ns[run] = worst;
            }
        }
    }
    free(per_thread);
    return 0;
}

int bench_omp_runs(unsigned n, uint64_t warmup, uint64_t iterations, unsigned runs,
                   void (*bind)(unsigned rank, void *ctx), void *ctx, double *latency_ns)
{
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    pid_t child = fork();
    if (child < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (child == 0) {
        close(fds[0]);
        /* libgomp spins up to 300000 pauses for a partner that busy
         * neighbours hold off the CPU: some runs beside them take 100 us a
         * barrier where the first took 1 us. A minute per run at most;
         * past it the row is reported failed, not waited on for hours. */
        alarm(60 * runs);
        int rc = omp_runs_here(n, warmup, iterations, runs, bind, ctx, latency_ns);
        size_t bytes = runs * sizeof *latency_ns;
        bool sent = rc == 0 && write(fds[1], latency_ns, bytes) == (ssize_t)bytes;
        _exit(sent ? 0 : 1);
    }
    close(fds[1]);
    size_t want = runs * sizeof *latency_ns, got = 0;
    while (got < want) {
        ssize_t k = read(fds[0], (char *)latency_ns + got, want - got);
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    close(fds[0]);
    int status;
    if (waitpid(child, &status, 0) < 0)
        return -1;
    return got == want && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}
#else
int bench_omp_runs(unsigned n, uint64_t warmup, uint64_t iterations, unsigned runs,
                   void (*bind)(unsigned rank, void *ctx), void *ctx, double *latency_ns)
{
    (void)n;
    (void)warmup;
    (void)iterations;
    (void)runs;
    (void)bind;
    (void)ctx;
    (void)latency_ns;
    return -1;
}
#endif
