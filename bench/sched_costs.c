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
 * tick, where it is longer than the slice), the wake-up latency beside 1
 * to 3 busy neighbours and how often it waits for a tick, how far apart
 * the ticks of two CPUs fall, and how often the kernel moves unbound
 * threads of a barrier beside busy ones. Medians of ROUNDS rounds (the
 * busy runs, ticks and barrier: of 0.4 s of them); one JSON object on
 * stdout.
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
    double cpu_per_round; /* the sleeper's own CPU time a round (schedstat) */
};

/* The calling thread's CPU time so far (/proc/thread-self/schedstat, the
 * first field: CONFIG_SCHED_INFO, no schedstats needed); -1: unknown. */
static long long thread_cpu_ns(void)
{
    FILE *f = fopen("/proc/thread-self/schedstat", "r");
    long long run = -1;
    if (f) {
        if (fscanf(f, "%lld", &run) != 1)
            run = -1;
        fclose(f);
    }
    return run;
}

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
    long long cpu0 = thread_cpu_ns();
    for (unsigned r = 0; r < p->rounds; r++) {
        uint32_t want = 2 * r + 1;
        atomic_store_explicit(&p->asleep, want, memory_order_release);
        while (atomic_load_explicit(&p->turn, memory_order_acquire) != want)
            futex(&p->turn, FUTEX_WAIT, 2 * r);
        atomic_store_explicit(&p->woke_at, now_ns(), memory_order_release);
        atomic_store_explicit(&p->turn, want + 1, memory_order_release);
        futex(&p->turn, FUTEX_WAKE, 1);
    }
    long long cpu1 = thread_cpu_ns();
    p->cpu_per_round = cpu0 < 0 || cpu1 < 0 ? -1 : (double)(cpu1 - cpu0) / p->rounds;
    return NULL;
}

/* Busy neighbours on CPU 1 while the sleeper sleeps there: its CPU is
 * not idle when it is woken. */
#define BURNERS_MOST 3u
/* a wake-up this late waited for the tick (docs/model.md section 9) */
#define WAKE_SLOW_NS 500000u
static atomic_bool burning;
static void *burn(void *arg)
{
    (void)arg;
    bind_to(1);
    while (atomic_load_explicit(&burning, memory_order_relaxed))
        ;
    return NULL;
}

/* One sleeper on another CPU, idle or running `busy` busy neighbours:
 * the waker's FUTEX_WAKE, and until the sleeper's first clock read. */
static int wake_other_cpu(unsigned rounds, unsigned busy, uint64_t *call, uint64_t *latency,
                          double *sleeper_cpu)
{
    struct pair p = {.rounds = rounds, .cpu = 1};
    pthread_t t, burner[BURNERS_MOST];
    bind_to(0);
    atomic_store_explicit(&burning, true,
                          memory_order_relaxed); /* a stop flag: publishes nothing */
    for (unsigned i = 0; i < busy; i++)
        if (pthread_create(&burner[i], NULL, burn, NULL))
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
    if (sleeper_cpu)
        *sleeper_cpu = p.cpu_per_round;
    atomic_store_explicit(&burning, false, memory_order_relaxed);
    for (unsigned i = 0; i < busy; i++)
        pthread_join(burner[i], NULL);
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

/* Into half_trip, or, in a pass of its own so that its clock reads stay
 * out of the half trips, into wake_call: the waker's FUTEX_WAKE of a
 * sleeper of its own CPU, which only queues the sleeper there, with no
 * interrupt to another CPU (docs/model.md section 9, "wake-call-local"). */
static int same_cpu_switch(unsigned rounds, uint64_t *half_trip, uint64_t *wake_call)
{
    struct pingpong p = {.rounds = rounds};
    pthread_t t;
    bind_to(0);
    if (pthread_create(&t, NULL, ponger, &p))
        return -1;
    for (unsigned r = 0; r < rounds; r++) {
        uint64_t t0 = now_ns();
        atomic_store_explicit(&p.turn, 2 * r + 1, memory_order_release);
        if (wake_call) {
            uint64_t w0 = now_ns();
            futex(&p.turn, FUTEX_WAKE, 1);
            wake_call[r] = now_ns() - w0;
        } else {
            futex(&p.turn, FUTEX_WAKE, 1);
        }
        while (atomic_load_explicit(&p.turn, memory_order_acquire) != 2 * r + 2)
            futex(&p.turn, FUTEX_WAIT, 2 * r + 1);
        if (half_trip)
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

/* Run fn on two threads, with args[0] and args[1], and join both; -1 when
 * a thread could not start (the other, if started, is joined first). */
static int run_two(void *(*fn)(void *), void *arg0, void *arg1)
{
    pthread_t first, second;
    if (pthread_create(&first, NULL, fn, arg0))
        return -1;
    int failed = pthread_create(&second, NULL, fn, arg1);
    pthread_join(first, NULL);
    if (failed)
        return -1;
    pthread_join(second, NULL);
    return 0;
}

static int busy_run(uint64_t *median_ns)
{
    static struct busy_runs r[2];
    uint64_t until = now_ns() + BUSY_RUN_NS;
    for (unsigned i = 0; i < 2; i++) {
        r[i].until = until;
        r[i].n = 0;
    }
    if (run_two(busy_runner, &r[0], &r[1]))
        return -1;
    uint64_t all[2 * BUSY_RUNS_MOST];
    unsigned n = 0;
    for (unsigned i = 0; i < 2; i++)
        for (unsigned k = 0; k < r[i].n; k++)
            all[n++] = r[i].runs[k];
    *median_ns = n ? (uint64_t)median(all, n) : 0;
    return 0;
}

/* Where the timer ticks of CPU 0 and CPU 1 fall, one against the other
 * (the model takes them together: Linux aligns every CPU's tick to the
 * same jiffy unless booted with skew_tick=1). A thread on each CPU reads
 * the clock for TICK_WATCH_NS and notes each jump over TICK_GAP_NS (an
 * interrupt); the tick is the most frequent phase of those jumps modulo
 * the tick period, the period among the kernel's HZ choices the one whose
 * phases gather most. The skew: CPU 1's phase less CPU 0's, in
 * (-period/2, period/2]. */
#define TICK_WATCH_NS 400000000u
#define TICK_GAP_NS 1000u
#define TICK_GAPS_MOST 8192u
#define TICK_BINS 256u

struct tick_watch {
    int cpu;
    uint64_t until;
    uint64_t at[TICK_GAPS_MOST];
    unsigned n;
};

static void *tick_watcher(void *arg)
{
    struct tick_watch *w = arg;
    bind_to(w->cpu);
    uint64_t last = now_ns();
    while (last < w->until) {
        uint64_t t = now_ns();
        if (t - last > TICK_GAP_NS && w->n < TICK_GAPS_MOST)
            w->at[w->n++] = last;
        last = t;
    }
    return NULL;
}

/* The busiest bin of the jumps' phases modulo `period` (three bins
 * summed, around), *count in it; the phase at the bin's middle. */
static uint64_t tick_phase(const struct tick_watch *w, uint64_t period, unsigned *count)
{
    unsigned bins[TICK_BINS] = {0};
    for (unsigned i = 0; i < w->n; i++)
        bins[w->at[i] % period * TICK_BINS / period]++;
    unsigned best = 0, most = 0;
    for (unsigned b = 0; b < TICK_BINS; b++) {
        unsigned c = bins[(b + TICK_BINS - 1) % TICK_BINS] + bins[b] + bins[(b + 1) % TICK_BINS];
        if (c > most)
            most = c, best = b;
    }
    *count = most;
    return (2 * best + 1) * period / (2 * TICK_BINS);
}

static int tick_skew(int64_t *skew_ns, unsigned *hz_out)
{
    static struct tick_watch w[2];
    uint64_t until = now_ns() + TICK_WATCH_NS;
    for (unsigned i = 0; i < 2; i++) {
        w[i].cpu = (int)i;
        w[i].until = until;
        w[i].n = 0;
    }
    if (run_two(tick_watcher, &w[0], &w[1]))
        return -1;
    /* kernel/Kconfig.hz's choices, longest period first. The ticks
     * gather in one phase modulo their own period and modulo any divisor
     * of it (1000 Hz's 1 ms divides 250 Hz's 4 ms): the period is the
     * longest in which nearly as many jumps gather as in the best. */
    static const unsigned hz_choices[] = {100, 250, 300, 1000};
    enum { NHZ = sizeof hz_choices / sizeof *hz_choices };
    unsigned gathered[NHZ], most = 0, hz = 0;
    for (unsigned i = 0; i < NHZ; i++) {
        tick_phase(&w[0], 1000000000u / hz_choices[i], &gathered[i]);
        most = gathered[i] > most ? gathered[i] : most;
    }
    for (unsigned i = 0; i < NHZ && !hz; i++)
        if (most && 5 * gathered[i] >= 4 * most)
            hz = hz_choices[i];
    if (!hz)
        return -1;
    uint64_t period = 1000000000u / hz;
    unsigned c;
    int64_t d = (int64_t)tick_phase(&w[1], period, &c) - (int64_t)tick_phase(&w[0], period, &c);
    if (d > (int64_t)period / 2)
        d -= (int64_t)period;
    if (d <= -(int64_t)period / 2)
        d += (int64_t)period;
    *skew_ns = d;
    *hz_out = hz;
    return 0;
}

/* How often the kernel moves an unbound participant of a barrier beside
 * busy work: BARRIER_THREADS unbound threads in glibc's pthread_barrier
 * beside as many unbound busy threads for BARRIER_RUN_NS; their
 * migrations (se.nr_migrations) and sleeps (voluntary switches) from
 * /proc/thread-self/sched, per episode (-1 when the kernel has no such
 * file: CONFIG_SCHED_DEBUG). And where the kernel keeps them: the share
 * of episodes that every participant ended on one CPU, and the share in
 * which the busy threads were not spread evenly over the CPUs (each
 * notes its CPU every BURN_CPU_CHECK turns of its loop; participant 0
 * reads them at every episode). docs/model.md section 9: the load
 * balancer piles the busy threads unevenly and the participants follow
 * the lighter CPU at their wake-ups. */
#define BARRIER_THREADS 4u
#define BARRIER_RUN_NS 400000000u

static long sched_field(const char *name)
{
    FILE *f = fopen("/proc/thread-self/sched", "r");
    if (!f)
        return -1;
    char line[256];
    long v = -1;
    size_t len = strlen(name);
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, name, len) && line[len] == ' ') {
            char *colon = strchr(line, ':');
            if (colon)
                v = atol(colon + 1);
        }
    fclose(f);
    return v;
}

#define BURN_CPU_CHECK 4096u
/* each busy thread's CPU as it last noted it, + 1 (0: not yet) */
static _Atomic uint32_t burner_cpu[BARRIER_THREADS];
/* each participant's CPU at the end of its last episode */
static _Atomic uint32_t runner_cpu[BARRIER_THREADS];

struct barrier_run {
    pthread_barrier_t *barrier;
    _Atomic uint64_t *stop_after; /* the episode after which all stop */
    uint64_t until;
    unsigned rank;
    uint64_t episodes;
    long migrations, sleeps;
    uint64_t packed, uneven; /* rank 0: episodes so seen */
};

/* Whether the busy threads are spread as evenly as the CPUs allow (the
 * counts per CPU differ by at most one), as they last noted. */
static bool burners_even(void)
{
    unsigned on[CPU_SETSIZE] = {0}, most = 0, least = UINT32_MAX;
    int ncpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
    for (unsigned i = 0; i < BARRIER_THREADS; i++) {
        /* relaxed: a sample; a stale CPU is a sample a moment old */
        uint32_t c = atomic_load_explicit(&burner_cpu[i], memory_order_relaxed);
        if (c > 0 && c <= CPU_SETSIZE)
            on[c - 1]++;
    }
    for (int c = 0; c < ncpus && c < CPU_SETSIZE; c++) {
        most = on[c] > most ? on[c] : most;
        least = on[c] < least ? on[c] : least;
    }
    return most - least <= 1;
}

static void *barrier_runner(void *arg)
{
    struct barrier_run *r = arg;
    long m0 = sched_field("se.nr_migrations"), s0 = sched_field("nr_voluntary_switches");
    uint64_t e = 0;
    for (;;) {
        pthread_barrier_wait(r->barrier);
        e++;
        /* relaxed: a sample, read by rank 0 after the next episode */
        atomic_store_explicit(&runner_cpu[r->rank], (uint32_t)sched_getcpu() + 1,
                              memory_order_relaxed);
        if (r->rank == 0 && e > 1) {
            /* the others' CPUs at their last episode's end (the barrier
             * orders their stores before this read) */
            bool packed = true;
            for (unsigned i = 1; i < BARRIER_THREADS; i++)
                packed &= atomic_load_explicit(&runner_cpu[i], memory_order_relaxed) ==
                          atomic_load_explicit(&runner_cpu[0], memory_order_relaxed);
            r->packed += packed;
            r->uneven += !burners_even();
        }
        /* the leader names an episode two ahead: every thread reads the
         * name after episode e or e + 1, so all stop after the same one */
        uint64_t stop = atomic_load_explicit(r->stop_after, memory_order_relaxed);
        if (e == stop)
            break;
        if (r->rank == 0 && stop == UINT64_MAX && (e & 63) == 0 && now_ns() > r->until)
            atomic_store_explicit(r->stop_after, e + 2, memory_order_relaxed);
    }
    long m1 = sched_field("se.nr_migrations"), s1 = sched_field("nr_voluntary_switches");
    r->episodes = e;
    r->migrations = m0 < 0 || m1 < 0 ? -1 : m1 - m0;
    r->sleeps = s0 < 0 || s1 < 0 ? -1 : s1 - s0;
    return NULL;
}

static void *burn_anywhere(void *arg)
{
    _Atomic uint32_t *cpu = arg;
    for (unsigned turn = 0; atomic_load_explicit(&burning, memory_order_relaxed); turn++)
        if (turn % BURN_CPU_CHECK == 0) /* relaxed: a sample (burners_even) */
            atomic_store_explicit(cpu, (uint32_t)sched_getcpu() + 1, memory_order_relaxed);
    return NULL;
}

static int barrier_moves(double *migrations, double *sleeps, double *packed, double *uneven)
{
    pthread_barrier_t barrier;
    _Atomic uint64_t stop_after = UINT64_MAX;
    struct barrier_run r[BARRIER_THREADS];
    pthread_t t[BARRIER_THREADS], burner[BARRIER_THREADS];
    cpu_set_t all;
    CPU_ZERO(&all);
    for (int c = 0; c < CPU_SETSIZE; c++)
        CPU_SET(c, &all);
    pthread_setaffinity_np(pthread_self(), sizeof all, &all); /* unbound, as are its threads */
    if (pthread_barrier_init(&barrier, NULL, BARRIER_THREADS))
        return -1;
    atomic_store_explicit(&burning, true,
                          memory_order_relaxed); /* a stop flag: publishes nothing */
    for (unsigned i = 0; i < BARRIER_THREADS; i++)
        if (pthread_create(&burner[i], NULL, burn_anywhere, &burner_cpu[i]))
            return -1;
    uint64_t until = now_ns() + BARRIER_RUN_NS;
    for (unsigned i = 0; i < BARRIER_THREADS; i++) {
        r[i] = (struct barrier_run){
            .barrier = &barrier, .stop_after = &stop_after, .until = until, .rank = i};
        if (pthread_create(&t[i], NULL, barrier_runner, &r[i]))
            return -1;
    }
    long m = 0, s = 0;
    for (unsigned i = 0; i < BARRIER_THREADS; i++) {
        pthread_join(t[i], NULL);
        m = m < 0 || r[i].migrations < 0 ? -1 : m + r[i].migrations;
        s = s < 0 || r[i].sleeps < 0 ? -1 : s + r[i].sleeps;
    }
    atomic_store_explicit(&burning, false, memory_order_relaxed);
    for (unsigned i = 0; i < BARRIER_THREADS; i++)
        pthread_join(burner[i], NULL);
    pthread_barrier_destroy(&barrier);
    double e = (double)r[0].episodes;
    *migrations = m < 0 ? -1 : (double)m / e;
    *sleeps = s < 0 ? -1 : (double)s / e;
    *packed = (double)r[0].packed / (e - 1);
    *uneven = (double)r[0].uneven / (e - 1);
    return 0;
}

/* A program creating its threads one after another: the time each
 * pthread_create of a loop takes, the threads waiting (asleep) until all
 * are made, batches of CREATE_BATCH; into v[0..n). The scheduler model's
 * create-every (docs/model.md section 9, "Runs in time"). */
#define CREATE_BATCH 16u
static _Atomic uint32_t created_go;
static void *created(void *arg)
{
    while (!atomic_load_explicit(&created_go, memory_order_acquire))
        futex(&created_go, FUTEX_WAIT, 0); /* a wake or a changed word ends it */
    return arg;
}

static int create_interval(unsigned n, uint64_t *v)
{
    for (unsigned done = 0; done < n;) {
        pthread_t t[CREATE_BATCH];
        unsigned made = 0;
        atomic_store_explicit(&created_go, 0, memory_order_relaxed);
        uint64_t before = now_ns();
        for (; made < CREATE_BATCH; made++) {
            if (pthread_create(&t[made], NULL, created, NULL))
                break;
            uint64_t after = now_ns();
            if (done < n)
                v[done++] = after - before;
            before = after;
        }
        /* release: pairs with the acquire load of the created threads */
        atomic_store_explicit(&created_go, 1, memory_order_release);
        futex(&created_go, FUTEX_WAKE, INT32_MAX);
        for (unsigned i = 0; i < made; i++)
            pthread_join(t[i], NULL);
        if (made < CREATE_BATCH) {
            fprintf(stderr, "topsync-bench-sched-costs: pthread_create failed\n");
            return -1;
        }
    }
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
    double sleeper_cpu, sleeper_cpu_busy;
    if (wake_other_cpu(wake_rounds, 0, a, b, &sleeper_cpu) < 0)
        return 1;
    double wake_one = median(a, wake_rounds), wake_latency = median(b, wake_rounds);
    if (wake_other_cpu(wake_rounds, 1, a, b, &sleeper_cpu_busy) < 0)
        return 1;
    double wake_busy = median(a, wake_rounds), wake_latency_busy = median(b, wake_rounds);
    if (same_cpu_switch(rounds, a, NULL) < 0 || same_cpu_switch(rounds, NULL, b) < 0)
        return 1;
    double switch_ns = median(a, rounds), wake_local = median(b, rounds);
    uint64_t busy_run_ns;
    if (busy_run(&busy_run_ns) < 0)
        return 1;
    /* beside 1 to BURNERS_MOST busy neighbours, every round: the slow
     * wake-ups are the rare ones (docs/model.md section 9) */
    double beside_median[BURNERS_MOST], beside_slow[BURNERS_MOST];
    for (unsigned k = 1; k <= BURNERS_MOST; k++) {
        if (wake_other_cpu(rounds, k, a, b, NULL) < 0)
            return 1;
        unsigned slow = 0;
        for (unsigned r = 0; r < rounds; r++)
            slow += b[r] > WAKE_SLOW_NS;
        beside_median[k - 1] = median(b, rounds);
        beside_slow[k - 1] = (double)slow / rounds;
    }
    unsigned create_rounds = rounds < 320 ? rounds : 320;
    if (create_interval(create_rounds, a) < 0)
        return 1;
    double create_ns = median(a, create_rounds);
    int64_t skew_ns;
    unsigned hz;
    if (tick_skew(&skew_ns, &hz) < 0)
        return 1;
    double migrations, sleeps, packed, uneven;
    if (barrier_moves(&migrations, &sleeps, &packed, &uneven) < 0)
        return 1;
    uint64_t c0 = now_ns();
    for (unsigned r = 0; r < rounds; r++)
        a[r] = now_ns();
    double clock_ns = (double)(now_ns() - c0) / rounds;
    printf("{\"futex_wake_nobody_ns\": %.0f, \"futex_wake_one_ns\": %.0f, "
           "\"wakeup_latency_ns\": %.0f, \"futex_wake_one_busy_ns\": %.0f, "
           "\"wakeup_latency_busy_ns\": %.0f, \"sched_yield_ns\": %.0f, "
           "\"same_cpu_switch_ns\": %.0f, \"busy_run_ns\": %llu, "
           "\"wakeup_latency_beside_busy_ns\": [%.0f, %.0f, %.0f], "
           "\"wakeup_over_500us_beside_busy\": [%.4f, %.4f, %.4f], "
           "\"tick_hz\": %u, \"tick_skew_ns\": %lld, ",
           wake_none, wake_one, wake_latency, wake_busy, wake_latency_busy, yield, switch_ns,
           (unsigned long long)busy_run_ns, beside_median[0], beside_median[1], beside_median[2],
           beside_slow[0], beside_slow[1], beside_slow[2], hz, (long long)skew_ns);
    if (migrations < 0)
        printf("\"barrier_migrations_per_episode\": null, \"barrier_sleeps_per_episode\": null, ");
    else
        printf("\"barrier_migrations_per_episode\": %.4f, \"barrier_sleeps_per_episode\": %.3f, ",
               migrations, sleeps);
    printf("\"barrier_packed_share\": %.3f, \"barrier_busy_uneven_share\": %.3f, ", packed, uneven);
    /* a sleeper's own CPU time a round is its way into the futex wait and
     * back out, plus the FUTEX_WAKE it makes of its waker, asleep on the
     * idle other CPU: that wake call taken away, the rest is the cost of
     * one sleep to the sleeper (docs/model.md section 9, "sleep-cpu") */
    if (sleeper_cpu < 0)
        printf("\"sleeper_cpu_per_round_ns\": null, \"sleeper_cpu_per_round_busy_ns\": null, "
               "\"sleep_cpu_ns\": null, ");
    else
        printf("\"sleeper_cpu_per_round_ns\": %.0f, \"sleeper_cpu_per_round_busy_ns\": %.0f, "
               "\"sleep_cpu_ns\": %.0f, ",
               sleeper_cpu, sleeper_cpu_busy, sleeper_cpu - wake_one);
    printf("\"futex_wake_same_cpu_ns\": %.0f, \"create_ns\": %.0f, \"clock_read_ns\": %.1f, "
           "\"rounds\": %u}\n",
           wake_local, create_ns, clock_ns, rounds);
    free(a);
    free(b);
    return 0;
}
