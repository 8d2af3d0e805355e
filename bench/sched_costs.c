/*
 * topsync-bench-sched-costs: what the OS charges a barrier's waits on this
 * machine, the constants of the scheduler model (docs/model.md section 9)
 * measured instead of guessed: a FUTEX_WAKE nobody waits on, a FUTEX_WAKE
 * that wakes one sleeper (the waker's cost), the time from that call until
 * the sleeper runs on a CPU of its own, idle or running a busy neighbour
 * (then the sleeper preempts it: it slept, so it is owed time), a
 * sched_yield with nothing
 * else to run, a switch between two threads of one CPU (half a futex
 * ping-pong on it, a wake-up and a switch each way), and how long a busy
 * thread runs before another busy thread of its CPU takes it (the timer
 * tick, where it is longer than the slice). Medians of ROUNDS rounds (the
 * busy runs: of 0.4 s of them); one JSON object on stdout.
 *
 *   usage: topsync-bench-sched-costs [--rounds N]   (default 2000)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static long futex(_Atomic uint32_t *word, int op, uint32_t value)
{
    return syscall(SYS_futex, word, op | FUTEX_PRIVATE_FLAG, value, NULL, NULL, 0);
}

static int by_value(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static double median(uint64_t *v, unsigned n)
{
    qsort(v, n, sizeof *v, by_value);
    return n % 2 ? (double)v[n / 2] : ((double)v[n / 2 - 1] + (double)v[n / 2]) / 2;
}

static void bind_to(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

/* Two threads and a word: `turn` says whose turn it is; each sleeps on it
 * until it is its own. The sleeper side of the wake-up measurements. */
struct pair {
    _Atomic uint32_t turn;
    _Atomic uint64_t woke_at; /* the sleeper's clock right after waking */
    _Atomic uint32_t asleep;  /* the sleeper is about to wait */
    unsigned rounds;
    int cpu;
};

static void wait_turn(struct pair *p, uint32_t mine)
{
    uint32_t seen;
    while ((seen = atomic_load_explicit(&p->turn, memory_order_acquire)) != mine)
        futex(&p->turn, FUTEX_WAIT, seen);
}

static void *sleeper(void *arg)
{
    struct pair *p = arg;
    bind_to(p->cpu);
    for (unsigned r = 0; r < p->rounds; r++) {
        uint32_t want = 2 * r + 1;
        atomic_store_explicit(&p->asleep, want, memory_order_release);
        while (atomic_load_explicit(&p->turn, memory_order_acquire) != want)
            futex(&p->turn, FUTEX_WAIT, 2 * r);
        atomic_store_explicit(&p->woke_at, now_ns(), memory_order_release);
        atomic_store_explicit(&p->turn, want + 1, memory_order_release);
        futex(&p->turn, FUTEX_WAKE, 1);
    }
    return NULL;
}

/* A busy neighbour on CPU 1 while the sleeper sleeps there: its CPU is
 * not idle when it is woken. */
static atomic_bool burning;
static void *burn(void *arg)
{
    (void)arg;
    bind_to(1);
    while (atomic_load_explicit(&burning, memory_order_relaxed))
        ;
    return NULL;
}

/* One sleeper on another CPU, idle or running a busy neighbour: the
 * waker's FUTEX_WAKE, and until the sleeper's first clock read. */
static int wake_other_cpu(unsigned rounds, bool busy, uint64_t *call, uint64_t *latency)
{
    struct pair p = {.rounds = rounds, .cpu = 1};
    pthread_t t, burner;
    bind_to(0);
    atomic_store(&burning, busy);
    if (busy && pthread_create(&burner, NULL, burn, NULL))
        return -1;
    if (pthread_create(&t, NULL, sleeper, &p))
        return -1;
    for (unsigned r = 0; r < rounds; r++) {
        uint32_t want = 2 * r + 1;
        while (atomic_load_explicit(&p.asleep, memory_order_acquire) != want)
            sched_yield();
        /* let it reach the futex: 200 us is long past the syscall's entry */
        uint64_t until = now_ns() + 200000;
        while (now_ns() < until)
            ;
        uint64_t t0 = now_ns();
        atomic_store_explicit(&p.turn, want, memory_order_release);
        futex(&p.turn, FUTEX_WAKE, 1);
        uint64_t t1 = now_ns();
        wait_turn(&p, want + 1);
        call[r] = t1 - t0;
        latency[r] = atomic_load_explicit(&p.woke_at, memory_order_acquire) - t0;
    }
    pthread_join(t, NULL);
    if (busy) {
        atomic_store(&burning, false);
        pthread_join(burner, NULL);
    }
    return 0;
}

/* Two threads on one CPU passing the turn: a round trip is two wake-ups
 * and two switches. */
struct pingpong {
    _Atomic uint32_t turn;
    unsigned rounds;
};

static void *ponger(void *arg)
{
    struct pingpong *p = arg;
    bind_to(0);
    for (unsigned r = 0; r < p->rounds; r++) {
        while (atomic_load_explicit(&p->turn, memory_order_acquire) != 2 * r + 1)
            futex(&p->turn, FUTEX_WAIT, 2 * r);
        atomic_store_explicit(&p->turn, 2 * r + 2, memory_order_release);
        futex(&p->turn, FUTEX_WAKE, 1);
    }
    return NULL;
}

static int same_cpu_switch(unsigned rounds, uint64_t *half_trip)
{
    struct pingpong p = {.rounds = rounds};
    pthread_t t;
    bind_to(0);
    if (pthread_create(&t, NULL, ponger, &p))
        return -1;
    for (unsigned r = 0; r < rounds; r++) {
        uint64_t t0 = now_ns();
        atomic_store_explicit(&p.turn, 2 * r + 1, memory_order_release);
        futex(&p.turn, FUTEX_WAKE, 1);
        while (atomic_load_explicit(&p.turn, memory_order_acquire) != 2 * r + 2)
            futex(&p.turn, FUTEX_WAIT, 2 * r + 1);
        half_trip[r] = (now_ns() - t0) / 2;
    }
    pthread_join(t, NULL);
    return 0;
}

/* How long a busy task runs before the other busy task of its CPU takes
 * the CPU: where the kernel's slice is shorter than its timer tick (no
 * high-resolution tick), the tick, which ends a slice. Two busy threads
 * on CPU 0 for BUSY_RUN_NS; each notes when its clock jumps by more than
 * BUSY_GAP_NS (it was off the CPU) and how long it ran before. */
#define BUSY_RUN_NS 400000000u
#define BUSY_GAP_NS 50000u
#define BUSY_RUNS_MOST 1024u

struct busy_runs {
    uint64_t until;
    uint64_t runs[BUSY_RUNS_MOST];
    unsigned n;
};

static void *busy_runner(void *arg)
{
    struct busy_runs *r = arg;
    bind_to(0);
    uint64_t last = now_ns(), from = 0; /* the first run started before the other */
    while (last < r->until) {
        uint64_t t = now_ns();
        if (t - last > BUSY_GAP_NS) {
            if (from && r->n < BUSY_RUNS_MOST)
                r->runs[r->n++] = last - from;
            from = t;
        }
        last = t;
    }
    return NULL;
}

static int busy_run(uint64_t *median_ns)
{
    static struct busy_runs r[2];
    pthread_t t[2];
    uint64_t until = now_ns() + BUSY_RUN_NS;
    for (unsigned i = 0; i < 2; i++) {
        r[i].until = until;
        r[i].n = 0;
        if (pthread_create(&t[i], NULL, busy_runner, &r[i]))
            return -1;
    }
    for (unsigned i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    uint64_t all[2 * BUSY_RUNS_MOST];
    unsigned n = 0;
    for (unsigned i = 0; i < 2; i++)
        for (unsigned k = 0; k < r[i].n; k++)
            all[n++] = r[i].runs[k];
    *median_ns = n ? (uint64_t)median(all, n) : 0;
    return 0;
}

int main(int argc, char **argv)
{
    unsigned rounds = 2000;
    for (int i = 1; i < argc; i++) {
        char *end;
        if (!strcmp(argv[i], "--rounds") && i + 1 < argc) {
            unsigned long v = strtoul(argv[++i], &end, 10);
            if (*end || !v || v > 1000000 || argv[i][0] == '-') {
                fprintf(stderr,
                        "topsync-bench-sched-costs: --rounds takes 1 to 1000000, not '%s'\n",
                        argv[i]);
                return 2;
            }
            rounds = (unsigned)v;
        } else if (!strcmp(argv[i], "--help")) {
            printf("usage: topsync-bench-sched-costs [--rounds N]\n");
            return 0;
        } else {
            fprintf(stderr,
                    "topsync-bench-sched-costs: unknown option '%s'; valid: --rounds, --help\n",
                    argv[i]);
            return 2;
        }
    }
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
        fprintf(stderr, "topsync-bench-sched-costs: needs 2 CPUs\n");
        return 1;
    }
    uint64_t *a = calloc(rounds, sizeof *a), *b = calloc(rounds, sizeof *b);
    if (!a || !b)
        return 1;
    _Atomic uint32_t nobody = 0;
    for (unsigned r = 0; r < rounds; r++) {
        uint64_t t0 = now_ns();
        futex(&nobody, FUTEX_WAKE, INT32_MAX);
        a[r] = now_ns() - t0;
    }
    double wake_none = median(a, rounds);
    for (unsigned r = 0; r < rounds; r++) {
        uint64_t t0 = now_ns();
        sched_yield();
        a[r] = now_ns() - t0;
    }
    double yield = median(a, rounds);
    unsigned wake_rounds = rounds < 500 ? rounds : 500; /* 200 us each */
    if (wake_other_cpu(wake_rounds, false, a, b) < 0)
        return 1;
    double wake_one = median(a, wake_rounds), wake_latency = median(b, wake_rounds);
    if (wake_other_cpu(wake_rounds, true, a, b) < 0)
        return 1;
    double wake_busy = median(a, wake_rounds), wake_latency_busy = median(b, wake_rounds);
    if (same_cpu_switch(rounds, a) < 0)
        return 1;
    double switch_ns = median(a, rounds);
    uint64_t busy_run_ns;
    if (busy_run(&busy_run_ns) < 0)
        return 1;
    uint64_t c0 = now_ns();
    for (unsigned r = 0; r < rounds; r++)
        a[r] = now_ns();
    double clock_ns = (double)(now_ns() - c0) / rounds;
    printf("{\"futex_wake_nobody_ns\": %.0f, \"futex_wake_one_ns\": %.0f, "
           "\"wakeup_latency_ns\": %.0f, \"futex_wake_one_busy_ns\": %.0f, "
           "\"wakeup_latency_busy_ns\": %.0f, \"sched_yield_ns\": %.0f, "
           "\"same_cpu_switch_ns\": %.0f, \"busy_run_ns\": %llu, \"clock_read_ns\": %.1f, "
           "\"rounds\": %u}\n",
           wake_none, wake_one, wake_latency, wake_busy, wake_latency_busy, yield, switch_ns,
           (unsigned long long)busy_run_ns, clock_ns, rounds);
    free(a);
    free(b);
    return 0;
}
