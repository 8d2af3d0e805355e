#define _POSIX_C_SOURCE 200809L
/* The GNU OpenMP peer: `#pragma omp barrier` in one parallel region. */
#include <stdlib.h>

#include "bench.h"

#ifdef _OPENMP
#include <omp.h>

int bench_omp_runs(unsigned n, uint64_t warmup, uint64_t iterations, unsigned runs,
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
            uint64_t t0 = bench_now_ns();
            for (uint64_t i = 0; i < iterations; i++) {
#pragma omp barrier
            }
            per_thread[rank] = (double)(bench_now_ns() - t0) / (double)iterations;
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
