/*
 * How long a woken sleeper of glibc's pthread_barrier waits on its CPU's
 * run queue before it runs (issue 54, docs/model.md section 9, "Bound
 * threads beside busy processes"). Two threads, bound to CPUs 0 and 1,
 * loop on pthread_barrier_wait for SECONDS; each reads its own
 * /proc/thread-self/schedstat (time on the CPU, time runnable but waiting
 * on the run queue, times it got the CPU: CONFIG_SCHED_INFO, no
 * schedstats needed) before and after, and prints per episode and per
 * time on the CPU. Not built by CMake: scripts/runqueue_wait.sh compiles
 * it and runs it beside 0-3 busy loops pinned to each CPU.
 *
 *   usage: runqueue_wait SECONDS
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define THREADS 2

static pthread_barrier_t barrier;
static double seconds;
static atomic_int stop; /* set by thread 0, read after a barrier that orders it */

struct schedstat {
    unsigned long long run_ns, wait_ns, timeslices;
};

static struct schedstat read_schedstat(void)
{
    struct schedstat s;
    FILE *f = fopen("/proc/thread-self/schedstat", "r");
    if (!f || fscanf(f, "%llu %llu %llu", &s.run_ns, &s.wait_ns, &s.timeslices) != 3) {
        fprintf(stderr, "runqueue_wait: cannot read /proc/thread-self/schedstat\n");
        exit(1);
    }
    fclose(f);
    return s;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void *participant(void *arg)
{
    long id = (long)arg;
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    CPU_SET((int)id, &cpus);
    if (pthread_setaffinity_np(pthread_self(), sizeof cpus, &cpus) != 0) {
        fprintf(stderr, "runqueue_wait: cannot bind to CPU %ld\n", id);
        exit(1);
    }
    pthread_barrier_wait(&barrier);
    struct schedstat before = read_schedstat();
    double start = now();
    long episodes = 0;
    for (;;) {
        pthread_barrier_wait(&barrier);
        episodes++;
        if (episodes % 64 == 0) { /* one more barrier orders the decision */
            if (id == 0 && now() - start > seconds)
                atomic_store_explicit(&stop, 1, memory_order_relaxed);
            pthread_barrier_wait(&barrier);
            if (atomic_load_explicit(&stop, memory_order_relaxed))
                break;
        }
    }
    double elapsed = now() - start;
    struct schedstat after = read_schedstat();
    double slices = (double)(after.timeslices - before.timeslices);
    printf("thread %ld (CPU %ld): %ld episodes, %.1f us an episode; on the CPU %.1f us, "
           "waiting on the run queue %.1f us, %.2f times on the CPU an episode; "
           "run-queue wait per time on the CPU %.1f us\n",
           id, id, episodes, elapsed * 1e6 / (double)episodes,
           (double)(after.run_ns - before.run_ns) / 1e3 / (double)episodes,
           (double)(after.wait_ns - before.wait_ns) / 1e3 / (double)episodes,
           slices / (double)episodes, (double)(after.wait_ns - before.wait_ns) / 1e3 / slices);
    return NULL;
}

int main(int argc, char **argv)
{
    seconds = argc > 1 ? atof(argv[1]) : 2.0;
    if (!(seconds > 0)) {
        fprintf(stderr, "usage: runqueue_wait SECONDS (a positive number)\n");
        return 2;
    }
    pthread_barrier_init(&barrier, NULL, THREADS);
    pthread_t threads[THREADS];
    for (long i = 0; i < THREADS; i++)
        if (pthread_create(&threads[i], NULL, participant, (void *)i) != 0) {
            fprintf(stderr, "runqueue_wait: cannot create a thread\n");
            return 1;
        }
    for (int i = 0; i < THREADS; i++)
        pthread_join(threads[i], NULL);
    return 0;
}
