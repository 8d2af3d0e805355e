/*
 * topsync-bench-fresh-starts: what a program pays in the first moments of
 * a barrier, with threads just started, unbound, beside busy neighbours
 * (issue 35). topsync-bench times runs after a warm-up, which hides them.
 *
 *   topsync-bench-fresh-starts [--threads N] [--starts S] [--window-ms D]
 *                              [--noise K]
 *
 * Each start makes a fresh barrier (topsync's auto, then glibc's, in turn)
 * and N fresh unbound threads, which pass it in a loop for D ms. Per start
 * and barrier it prints the mean of the first 100 episodes (from the
 * threads' creation) and the episodes per second over the window; then,
 * per barrier, the medians and the worst start. K busy processes (as
 * topsync-bench --noise) run throughout. docs/design.md section 4.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <topsync.h>

#include "bench.h"

#define FIRST_EPISODES 100u /* even: episodes go in pairs */
#define MAX_THREADS 64u
#define MAX_STARTS 1000u

struct start {
    topsync_barrier_t *topsync; /* NULL: glibc's */
    pthread_barrier_t glibc;
    _Atomic bool stop; /* set by the main thread when the window ends */
    _Atomic bool quit; /* rank 0's reading of stop, for every thread */
    uint64_t began_ns, first_done_ns;
    unsigned long episodes;
};

static void wait_once(struct start *s, unsigned rank)
{
    if (s->topsync)
        topsync_barrier_wait(s->topsync, rank);
    else
        pthread_barrier_wait(&s->glibc);
}

struct worker_arg {
    struct start *s;
    unsigned rank;
};

/* Every thread leaves after the same episode: rank 0 reads the stop flag
 * before an episode and publishes it in `quit`, which the others read
 * after that episode (the barrier orders the two), and a second episode
 * keeps rank 0 from overwriting it before all have read it. */
static void *worker(void *arg)
{
    struct worker_arg *a = arg;
    struct start *s = a->s;
    for (unsigned long e = 0;; e += 2) {
        if (a->rank == 0) /* relaxed: the barrier orders it (above) */
            atomic_store_explicit(&s->quit, atomic_load(&s->stop), memory_order_relaxed);
        wait_once(s, a->rank);
        bool quit = atomic_load_explicit(&s->quit, memory_order_relaxed);
        wait_once(s, a->rank);
        if (a->rank == 0 && e + 2 == FIRST_EPISODES)
            s->first_done_ns = ts_monotonic_ns();
        if (quit) {
            if (a->rank == 0)
                s->episodes = e + 2;
            return NULL;
        }
    }
}

/* One start of one barrier: 0, or -1 with a message. */
static int run_start(bool topsync, unsigned threads, unsigned window_ms, double *first_us,
                     double *per_second)
{
    struct start s = {0};
    if (topsync) {
        topsync_barrier_options_t o;
        topsync_barrier_options_init(&o);
        o.algorithm = "auto";
        if (topsync_barrier_create(&s.topsync, threads, &o) < 0) {
            fprintf(stderr, "topsync-bench-fresh-starts: %s\n", topsync_error_message());
            return -1;
        }
    } else if (pthread_barrier_init(&s.glibc, NULL, threads) != 0) {
        fprintf(stderr, "topsync-bench-fresh-starts: pthread_barrier_init failed\n");
        return -1;
    }
    pthread_t tid[MAX_THREADS];
    struct worker_arg args[MAX_THREADS];
    s.began_ns = ts_monotonic_ns();
    for (unsigned r = 0; r < threads; r++) {
        args[r] = (struct worker_arg){&s, r};
        if (pthread_create(&tid[r], NULL, worker, &args[r]) != 0) {
            fprintf(stderr, "topsync-bench-fresh-starts: pthread_create failed\n");
            exit(1); /* the threads made wait for the missing one */
        }
    }
    struct timespec window = {.tv_sec = window_ms / 1000,
                              .tv_nsec = (long)(window_ms % 1000) * 1000000};
    while (nanosleep(&window, &window) != 0 && errno == EINTR)
        ;
    atomic_store(&s.stop, true);
    for (unsigned r = 0; r < threads; r++)
        pthread_join(tid[r], NULL);
    uint64_t ended_ns = ts_monotonic_ns();
    if (s.topsync)
        topsync_barrier_destroy(s.topsync);
    else
        pthread_barrier_destroy(&s.glibc);
    *first_us = s.first_done_ns ? (double)(s.first_done_ns - s.began_ns) / 1e3 / FIRST_EPISODES
                                : -1; /* the window ended first */
    *per_second = (double)s.episodes * 1e9 / (double)(ended_ns - s.began_ns);
    return 0;
}

static int parse(const char *opt, const char *v, unsigned lo, unsigned hi, unsigned *out)
{
    uint64_t k;
    if (!v || bench_parse_u64(v, &k, lo, hi) < 0) {
        fprintf(stderr,
                "topsync-bench-fresh-starts: %s takes a whole number from %u to %u, not '%s'\n",
                opt, lo, hi, v ? v : "");
        return -1;
    }
    *out = (unsigned)k;
    return 0;
}

static int compare(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    unsigned threads = 2, starts = 10, window_ms = 100, noise = 0;
    for (int i = 1; i < argc; i += 2) { /* each option takes a value */
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int rc;
        if (!strcmp(argv[i], "--threads"))
            rc = parse("--threads", v, 1, MAX_THREADS, &threads);
        else if (!strcmp(argv[i], "--starts"))
            rc = parse("--starts", v, 1, MAX_STARTS, &starts);
        else if (!strcmp(argv[i], "--window-ms"))
            rc = parse("--window-ms", v, 1, 600000, &window_ms);
        else if (!strcmp(argv[i], "--noise"))
            rc = parse("--noise", v, 0, 4096, &noise);
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: topsync-bench-fresh-starts [--threads N] [--starts S] [--window-ms D] "
                   "[--noise K]\n");
            return 0;
        } else {
            fprintf(stderr,
                    "topsync-bench-fresh-starts: unknown option '%s'; valid: --threads, --starts, "
                    "--window-ms, --noise, --help\n",
                    argv[i]);
            return 2;
        }
        if (rc < 0)
            return 2;
    }
    if (bench_noise_start(noise) < 0)
        return 1;
    /* per barrier (topsync's, glibc's): the first episodes' means and the
     * episodes per second of each start */
    double *all = calloc(4 * (size_t)starts, sizeof *all);
    if (!all) {
        bench_noise_stop();
        fprintf(stderr, "topsync-bench-fresh-starts: out of memory\n");
        return 1;
    }
    double *first[2] = {all, all + starts}, *rate[2] = {all + 2 * starts, all + 3 * starts};
    printf("%u unbound threads, fresh per start, %u busy neighbour process%s, windows of %u ms\n",
           threads, noise, noise == 1 ? "" : "es", window_ms);
    printf("start  topsync: first %u us, episodes/s   glibc: first %u us, episodes/s\n",
           FIRST_EPISODES, FIRST_EPISODES);
    for (unsigned k = 0; k < starts; k++) {
        for (int b = 0; b < 2; b++)
            if (run_start(b == 0, threads, window_ms, &first[b][k], &rate[b][k]) < 0) {
                bench_noise_stop();
                free(all);
                return 1;
            }
        printf("%5u  %22.1f %12.0f   %20.1f %12.0f\n", k, first[0][k], rate[0][k], first[1][k],
               rate[1][k]);
    }
    bench_noise_stop();
    for (int b = 0; b < 2; b++) {
        qsort(first[b], starts, sizeof *first[b], compare);
        qsort(rate[b], starts, sizeof *rate[b], compare);
        unsigned unreached = 0; /* -1: the window ended first; they sort first */
        while (unreached < starts && first[b][unreached] < 0)
            unreached++;
        printf("%s: episodes/s median %.0f, worst %.0f; first %u episodes",
               b == 0 ? "topsync" : "glibc  ", bench_median(rate[b], starts), rate[b][0],
               FIRST_EPISODES);
        if (unreached < starts)
            printf(": median %.1f us, worst %.1f us",
                   bench_median(first[b] + unreached, starts - unreached), first[b][starts - 1]);
        if (unreached)
            printf(" (not reached within the window in %u of %u starts)", unreached, starts);
        printf("\n");
    }
    free(all);
    return 0;
}
