/*
 * topsync-bench-pthread-loop: an ordinary POSIX program that times
 * pthread_barrier_wait, for topsync-bench to run twice: as it is (glibc's
 * barrier) and with LD_PRELOAD=libtopsync-pthread.so. It knows nothing of
 * topsync (only <pthread.h>), as the programs the drop-in is for.
 *
 *   topsync-bench-pthread-loop THREADS ITERATIONS RUNS [core|none]
 *
 * Threads are bound round robin to the CPUs the process may use (core, the
 * default), or left where the kernel puts them (none: as an ordinary
 * pthread program runs). Each run:
 * a tenth of ITERATIONS as warm-up, then ITERATIONS timed waits; it prints
 * the maximum over threads of the mean latency in ns, one line per run, then
 * "implementation: NAME" (what topsync_pthread_barrier_implementation says
 * when the drop-in is loaded, else "glibc").
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static pthread_barrier_t barrier;
static unsigned long iterations;
static double *per_thread;
static int cpus[CPU_SETSIZE], ncpus;
static int unbound;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *worker(void *arg)
{
    unsigned id = (unsigned)(uintptr_t)arg;
    if (!unbound) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpus[id % (unsigned)ncpus], &one);
        pthread_setaffinity_np(pthread_self(), sizeof one, &one);
    }
    for (unsigned long i = 0; i < iterations / 10 + 1; i++)
        pthread_barrier_wait(&barrier);
    uint64_t t0 = now_ns();
    for (unsigned long i = 0; i < iterations; i++)
        pthread_barrier_wait(&barrier);
    per_thread[id] = (double)(now_ns() - t0) / (double)iterations;
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4 && !(argc == 5 && (!strcmp(argv[4], "core") || !strcmp(argv[4], "none")))) {
        fprintf(stderr, "usage: topsync-bench-pthread-loop THREADS ITERATIONS RUNS [core|none]\n");
        return 2;
    }
    unbound = argc == 5 && !strcmp(argv[4], "none");
    unsigned threads = (unsigned)strtoul(argv[1], NULL, 10);
    iterations = strtoul(argv[2], NULL, 10);
    unsigned runs = (unsigned)strtoul(argv[3], NULL, 10);
    if (threads == 0 || threads > 4096 || iterations == 0 || runs == 0 || runs > 32) {
        fprintf(stderr, "topsync-bench-pthread-loop: THREADS 1..4096, ITERATIONS >= 1, "
                        "RUNS 1..32\n");
        return 2;
    }
    cpu_set_t allowed;
    sched_getaffinity(0, sizeof allowed, &allowed);
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &allowed))
            cpus[ncpus++] = c;
    per_thread = calloc(threads, sizeof *per_thread);
    pthread_t *tid = calloc(threads, sizeof *tid);
    if (!per_thread || !tid || ncpus == 0)
        return 1;
    const char *impl = "glibc";
    for (unsigned r = 0; r < runs; r++) {
        if (pthread_barrier_init(&barrier, NULL, threads) != 0)
            return 1;
        const char *(*name)(pthread_barrier_t *) = (const char *(*)(pthread_barrier_t *))dlsym(
            RTLD_DEFAULT, "topsync_pthread_barrier_implementation");
        if (name)
            impl = name(&barrier);
        for (unsigned t = 0; t < threads; t++)
            if (pthread_create(&tid[t], NULL, worker, (void *)(uintptr_t)t) != 0)
                return 1;
        double worst = 0;
        for (unsigned t = 0; t < threads; t++) {
            pthread_join(tid[t], NULL);
            if (per_thread[t] > worst)
                worst = per_thread[t];
        }
        pthread_barrier_destroy(&barrier);
        printf("%.1f\n", worst);
    }
    printf("implementation: %s\n", impl);
    return 0;
}
