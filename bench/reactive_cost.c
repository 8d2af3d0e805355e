/*
 * topsync-bench-reactive-cost: what a reactive barrier's check adds to an
 * episode, measured inside one process (docs/design.md section 10, the
 * goal of issue 53: at most 5 ns at 2 threads). Between two commands this
 * VM's barriers drift by more than the check costs; here the same threads
 * run two barriers of "auto", one created with TOPSYNC_REACTIVE=on and one
 * with off, in alternating blocks (on-off, then off-on, so that a drift
 * within a pair cancels), and the answer is the median over pairs of the
 * difference.
 *
 *   topsync-bench-reactive-cost [THREADS [PAIRS [EPISODES]]]
 *
 * THREADS (2) bound round robin to the CPUs the process may use; PAIRS (40)
 * timed pairs of blocks after 10 untimed ones (the reactive barrier's
 * first windows, where it probes other configurations, are left out);
 * EPISODES (20000) per block. Prints one JSON object: the configuration
 * each barrier runs, the reactive one's switches during the timed pairs,
 * the medians of each, and the median and quartiles of on - off, in ns per
 * episode (thread 0's time for the block over its episodes).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <topsync.h>

enum { WARMUP_PAIRS = 10 };

static topsync_barrier_t *reactive, *fixed;
static pthread_barrier_t between; /* outside the timed blocks only */
static unsigned nthreads, pairs;
static unsigned long episodes;
static double *on_ns, *off_ns;   /* [pairs], written by thread 0 */
static uint64_t switches_before; /* the reactive one's, as timing starts */
static int cpus[CPU_SETSIZE], ncpus;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* One block of `episodes` waits on b: thread 0's ns per episode. */
static double block(topsync_barrier_t *b, unsigned rank)
{
    pthread_barrier_wait(&between);
    uint64_t t0 = now_ns();
    for (unsigned long i = 0; i < episodes; i++)
        topsync_barrier_wait(b, rank);
    return (double)(now_ns() - t0) / (double)episodes;
}

static void *worker(void *arg)
{
    unsigned rank = (unsigned)(uintptr_t)arg;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpus[rank % (unsigned)ncpus], &one);
    pthread_setaffinity_np(pthread_self(), sizeof one, &one);
    for (unsigned p = 0; p < WARMUP_PAIRS + pairs; p++) {
        /* on-off, then off-on: a drift within a pair counts for both */
        bool on_first = p % 2 == 0;
        if (rank == 0 && p == WARMUP_PAIRS)
            switches_before = topsync_barrier_switches(reactive);
        double first = block(on_first ? reactive : fixed, rank);
        double second = block(on_first ? fixed : reactive, rank);
        if (rank == 0 && p >= WARMUP_PAIRS) {
            on_ns[p - WARMUP_PAIRS] = on_first ? first : second;
            off_ns[p - WARMUP_PAIRS] = on_first ? second : first;
        }
    }
    return NULL;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The q-quantile of v[n] (sorted in place), the nearest rank below. */
static double quantile(double *v, unsigned n, double q)
{
    qsort(v, n, sizeof *v, by_value);
    return v[(unsigned)(q * (n - 1))];
}

static int create(topsync_barrier_t **b, const char *reactive_mode)
{
    if (setenv("TOPSYNC_REACTIVE", reactive_mode, 1))
        return -1;
    topsync_barrier_options_t o;
    topsync_barrier_options_init(&o);
    o.algorithm = "auto";
    int rc = topsync_barrier_create(b, nthreads, &o);
    if (rc < 0)
        fprintf(stderr, "topsync-bench-reactive-cost: topsync_barrier_create (%s): %s\n",
                reactive_mode, topsync_error_message());
    return rc;
}

static int parse(const char *arg, const char *what, unsigned long most, unsigned long *out)
{
    char *end;
    unsigned long v = strtoul(arg, &end, 10);
    if (*arg < '0' || *arg > '9' || *end || v < 1 || v > most) {
        fprintf(stderr, "topsync-bench-reactive-cost: %s '%s' is not a whole number 1..%lu\n", what,
                arg, most);
        return -1;
    }
    *out = v;
    return 0;
}

int main(int argc, char **argv)
{
    unsigned long threads = 2, npairs = 40, per_block = 20000;
    if (argc > 4 || (argc > 1 && parse(argv[1], "THREADS", 1024, &threads)) ||
        (argc > 2 && parse(argv[2], "PAIRS", 100000, &npairs)) ||
        (argc > 3 && parse(argv[3], "EPISODES", 100000000, &per_block))) {
        fprintf(stderr, "usage: topsync-bench-reactive-cost [THREADS [PAIRS [EPISODES]]]\n");
        return 2;
    }
    nthreads = (unsigned)threads;
    pairs = (unsigned)npairs;
    episodes = per_block;
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed))
        return perror("sched_getaffinity"), 1;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &allowed))
            cpus[ncpus++] = c;
    on_ns = calloc(pairs, sizeof *on_ns);
    off_ns = calloc(pairs, sizeof *off_ns);
    pthread_t *tids = calloc(nthreads, sizeof *tids);
    if (!on_ns || !off_ns || !tids)
        return perror("calloc"), 1;
    if (create(&reactive, "on") < 0 || create(&fixed, "off") < 0)
        return 1;
    pthread_barrier_init(&between, NULL, nthreads);
    for (unsigned t = 0; t < nthreads; t++)
        if (pthread_create(&tids[t], NULL, worker, (void *)(uintptr_t)t))
            return perror("pthread_create"), 1;
    for (unsigned t = 0; t < nthreads; t++)
        pthread_join(tids[t], NULL);
    /* a switch while timed would compare two configurations: reported */
    uint64_t switches = topsync_barrier_switches(reactive) - switches_before;
    double *diff = calloc(pairs, sizeof *diff);
    if (!diff)
        return perror("calloc"), 1;
    for (unsigned p = 0; p < pairs; p++)
        diff[p] = on_ns[p] - off_ns[p];
    printf("{\"threads\": %u, \"pairs\": %u, \"episodes_per_block\": %lu, "
           "\"reactive\": \"%s\", \"fixed\": \"%s\", \"switches\": %llu, "
           "\"on_ns\": %.2f, \"off_ns\": %.2f, \"on_minus_off_ns\": %.2f, "
           "\"on_minus_off_q25_ns\": %.2f, \"on_minus_off_q75_ns\": %.2f}\n",
           nthreads, pairs, episodes, topsync_barrier_algorithm(reactive),
           topsync_barrier_algorithm(fixed), (unsigned long long)switches,
           quantile(on_ns, pairs, 0.5), quantile(off_ns, pairs, 0.5), quantile(diff, pairs, 0.5),
           quantile(diff, pairs, 0.25), quantile(diff, pairs, 0.75));
    topsync_barrier_destroy(reactive);
    topsync_barrier_destroy(fixed);
    pthread_barrier_destroy(&between);
    free(diff);
    free(tids);
    free(on_ns);
    free(off_ns);
    return 0;
}
