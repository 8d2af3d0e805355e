/*
 * The wait policy's learning (src/wait/wait.c, docs/design.md section 8.1,
 * "The spin" and "The long spin"), driven through ts_wait_slow with a word
 * that a second thread publishes at a point the test controls (once the
 * waiter sleeps on the futex, or once its idle hook has run), and the
 * settings that choose it (ts_barrier_wait_settings). No timed assertion:
 * each check follows from the order of events, not from how long they took.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <topsync/wait.h>

#include "barrier/setup.h"
#include "check.h"
#include "wait/wait.h"

#define FLOOR 16u /* wait.c, TS_ADAPTIVE_SPIN_FLOOR */

/* Two participants' rank lines: word 0's aux is the CPU a participant last
 * waited on (+1), words 1-3 what rank 0 learns. */
static _Alignas(64) ts_word lines[2][8];
static ts_word word;

static uint32_t learned_spin(void)
{
    return atomic_load_explicit(&lines[0][1].aux, memory_order_relaxed);
}

static void set_learned_spin(uint32_t cap)
{
    atomic_store_explicit(&lines[0][1].aux, cap + 1, memory_order_relaxed);
}

/* The publisher's trigger. */
enum trigger { WHEN_ASLEEP, WHEN_ASLEEP_THEN_2MS, WHEN_HOOK_RAN, AFTER_200US_FROM_ITS_CPU };
static _Atomic int waiter_cpu;
static _Atomic unsigned hook_calls;
struct publish {
    enum trigger trigger;
    uint32_t episode;
    ts_wait *policy;
};

static void *publisher(void *arg)
{
    struct publish *p = arg;
    if (p->trigger == AFTER_200US_FROM_ITS_CPU) {
        /* well into the waiter's long spin, as if from its CPU */
        nanosleep(&(struct timespec){0, 200000}, NULL);
        int cpu = atomic_load_explicit(&waiter_cpu, memory_order_relaxed);
        atomic_store_explicit(&lines[1][0].aux, (uint32_t)cpu + 1, memory_order_relaxed);
    } else if (p->trigger == WHEN_HOOK_RAN) {
        /* acquire: pairs with the hook's release increment */
        while (atomic_load_explicit(&hook_calls, memory_order_acquire) < 3)
            sched_yield();
    } else {
        /* relaxed: only when to publish is decided here; the publish is the
         * release */
        while (!(atomic_load_explicit(&word.value, memory_order_relaxed) & TS_SLEEPING))
            sched_yield();
        if (p->trigger == WHEN_ASLEEP_THEN_2MS)
            nanosleep(&(struct timespec){0, 2000000}, NULL);
    }
    ts_publish(&word, p->episode, p->policy);
    return NULL;
}

static uint32_t episode_now = 1;

/* One wait of rank 0 for the next episode, published as `trigger` says. */
static void wait_once(ts_wait *policy, enum trigger trigger)
{
    uint32_t episode = ++episode_now;
    struct publish p = {trigger, episode, policy};
    pthread_t t;
    atomic_store_explicit(&hook_calls, 0, memory_order_relaxed);
    ts_wait_learned = &lines[0][1];
    ts_wait_rank = 0;
    pthread_create(&t, NULL, publisher, &p);
    ts_wait_slow(&word, episode, policy);
    pthread_join(t, NULL);
}

static int hook_again(void *arg)
{
    (void)arg;
    /* release: pairs with the publisher's acquire */
    atomic_fetch_add_explicit(&hook_calls, 1, memory_order_release);
    return TOPSYNC_IDLE_AGAIN;
}

static ts_wait block_policy(void)
{
    ts_wait p;
    memset(&p, 0, sizeof p);
    p.kind = TS_WAIT_BLOCK;
    p.spin_iterations = 64;
    p.learn = true;
    p.peer_base = (const unsigned char *)&lines[0][0];
    p.peer_stride = sizeof lines[0];
    p.npeers = 2;
    return p;
}

static void test_learning_from_the_time_waited(void)
{
    /* A cap at the floor comes back up: the spin ran out (the publisher
     * waits for the waiter to sleep), and the wait, sleep and wake-up
     * included, took far less than the most (28 ms of pauses at most: the
     * publisher yields at once). Judged by the spin's outcome alone it
     * would stay at 16 for good. */
    ts_wait p = block_policy();
    p.spin_learn_most = 1u << 20;
    set_learned_spin(FLOOR);
    wait_once(&p, WHEN_ASLEEP);
    CHECK(learned_spin() - 1 > FLOOR);

    /* A wait much longer than the most halves the cap. */
    p.spin_learn_most = 64;
    set_learned_spin(64);
    wait_once(&p, WHEN_ASLEEP_THEN_2MS);
    CHECK_EQ(learned_spin() - 1, 32);
    set_learned_spin(FLOOR);
    wait_once(&p, WHEN_ASLEEP_THEN_2MS);
    CHECK_EQ(learned_spin() - 1, FLOOR);
}

static void test_colocation(void)
{
    /* Another participant last seen on this CPU: no spin, so nothing is
     * learned from the wait. The CPU is read twice (here and in the wait),
     * so a migration in between may spoil one try: one in three is
     * enough. Without the check every try learns. */
    ts_wait p = block_policy();
    p.colocation = true;
    p.spin_unclocked = 32; /* the long spin: yields only when co-located */
    p.yield_iterations = 16;
    p.spin_learn_most = 1u << 20;
    int untouched = 0;
    for (int attempt = 0; attempt < 3; attempt++) {
        set_learned_spin(FLOOR);
        int cpu = sched_getcpu();
        atomic_store_explicit(&lines[1][0].aux, (uint32_t)cpu + 1, memory_order_relaxed);
        wait_once(&p, WHEN_ASLEEP);
        untouched += learned_spin() - 1 == FLOOR;
    }
    CHECK(untouched > 0);

    /* Nobody on this CPU (no CPU numbered UINT32_MAX - 1): the spin runs,
     * and the wait is learned from. */
    atomic_store_explicit(&lines[1][0].aux, UINT32_MAX, memory_order_relaxed);
    set_learned_spin(FLOOR);
    wait_once(&p, WHEN_ASLEEP);
    CHECK(learned_spin() - 1 > FLOOR);
}

static void test_long_spin_on_the_partners_cpu(void)
{
    /* A long spin (past its unclocked part) that ends with the partner now
     * seen on the waiter's CPU held the CPU the partner needed: a miss,
     * the cap halves, though the word was reached. A migration between the
     * two reads of the CPU, or a spin that ran out first (28 ms), spoils a
     * try: one in three is enough; without the check it never halves. */
    ts_wait p = block_policy();
    p.colocation = true;
    p.spin_unclocked = 32;
    p.spin_learn_most = 1u << 20;
    int halved = 0;
    for (int attempt = 0; attempt < 3 && !halved; attempt++) {
        atomic_store_explicit(&lines[1][0].aux, UINT32_MAX, memory_order_relaxed);
        atomic_store_explicit(&waiter_cpu, sched_getcpu(), memory_order_relaxed);
        set_learned_spin(1u << 20);
        wait_once(&p, AFTER_200US_FROM_ITS_CPU);
        halved = learned_spin() - 1 == 1u << 19;
    }
    CHECK(halved);
}

static void test_eager_hook(void)
{
    /* A hook that answers TOPSYNC_IDLE_AGAIN: the wait after it spins at
     * most the floor before the hook and learns nothing from itself (its
     * publisher waits for the hook, so its spin always runs out). */
    ts_wait p = block_policy();
    p.spin_learn_most = 1u << 20;
    p.idle = hook_again;
    p.idle_ns = 1000000;
    set_learned_spin(FLOOR);
    wait_once(&p, WHEN_HOOK_RAN); /* not eager yet: learned from */
    uint32_t after_first = learned_spin();
    CHECK(after_first - 1 > FLOOR);
    wait_once(&p, WHEN_HOOK_RAN); /* eager */
    CHECK_EQ(learned_spin(), after_first);
    CHECK(atomic_load_explicit(&hook_calls, memory_order_relaxed) >= 3);
}

/* The waiter's own idle hook publishes the word: at its first call, the
 * slow path's first clock check, i.e. once the learned spin has run out. */
static struct publish hook_publishes;
static int hook_publish(void *arg)
{
    struct publish *p = arg;
    ts_publish(&word, p->episode, p->policy);
    return 0;
}

static void wait_published_by_hook(ts_wait *policy)
{
    ts_wait p = *policy;
    hook_publishes = (struct publish){WHEN_HOOK_RAN, ++episode_now, &p};
    p.idle = hook_publish;
    p.idle_arg = &hook_publishes;
    p.idle_ns = 1000000;
    ts_wait_learned = &lines[0][1];
    ts_wait_rank = 0;
    ts_wait_slow(&word, hook_publishes.episode, &p);
}

static uint64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void set_probe(uint64_t due_ns, unsigned failed, uint64_t last_wait_ns)
{
    ts_wait_spin_probe_set(&(struct ts_spin_probe){due_ns, failed, last_wait_ns});
}

static struct ts_spin_probe probe_now(void)
{
    struct ts_spin_probe s;
    ts_wait_spin_probe_get(&s);
    return s;
}

static void test_spin_probe(void)
{
    /* Two sleepers keep each other asleep (wait.c, "The spin probe"): a
     * spin that ran out at the floor goes on, when a probe is due, to the
     * probe's length; the partner that arrives meanwhile (here the hook,
     * first called past the floor, inside the probe) is caught, and the
     * cap becomes twice the probe (the most allows it), as after any spin
     * that caught. */
    uint32_t least = ts_wait_pauses_for_ns(TS_SPIN_PROBE_LEAST_NS);
    uint32_t most = ts_wait_pauses_for_ns(TS_SPIN_PROBE_MOST_NS);
    ts_wait p = block_policy();
    p.spin_learn_most = most - 1; /* below the longest probe (TS_SPIN_NS_MOST in use) */
    /* a hook that answers 0 ends the eager mode test_eager_hook left on
     * (an eager wait learns nothing, and probes nothing) */
    wait_published_by_hook(&p);
    set_learned_spin(FLOOR);
    set_probe(0, 3, 0); /* no wait measured yet: the shortest probe */
    uint64_t before = monotonic_ns();
    wait_published_by_hook(&p);
    CHECK_EQ(learned_spin() - 1, 2 * least);
    struct ts_spin_probe s = probe_now();
    CHECK_EQ(s.failed, 0); /* a probe that caught starts the period over */
    CHECK(s.due_ns >= before + 1000000);

    /* Its length: twice the last wait the spin did not end, within the
     * bounds. */
    set_learned_spin(FLOOR);
    set_probe(0, 0, TS_SPIN_PROBE_LEAST_NS); /* twice: 64 us */
    wait_published_by_hook(&p);
    CHECK_EQ(learned_spin() - 1, 2 * ts_wait_pauses_for_ns(2 * TS_SPIN_PROBE_LEAST_NS));
    set_learned_spin(FLOOR);
    set_probe(0, 0, 10 * TS_SPIN_PROBE_MOST_NS); /* the longest probe */
    wait_published_by_hook(&p);
    CHECK_EQ(learned_spin() - 1, most - 1); /* twice it, within the most */

    /* Not due: the spin that ran out goes to the futex path at once (the
     * hook publishes there); the schedule is untouched. */
    set_learned_spin(FLOOR);
    set_probe(UINT64_MAX, 2, 0);
    wait_published_by_hook(&p);
    s = probe_now();
    CHECK(s.due_ns == UINT64_MAX && s.failed == 2);

    /* A probe that fails (the publisher waits for the waiter to sleep,
     * which it does only after the probe) doubles the period, up to its
     * most (1024 times); the wait it was part of is the next probe's
     * measure (at least the probe itself). */
    set_learned_spin(FLOOR);
    set_probe(0, 0, 0);
    before = monotonic_ns();
    wait_once(&p, WHEN_ASLEEP);
    s = probe_now();
    CHECK_EQ(s.failed, 1);
    CHECK(s.due_ns >= before + 2000000);
    /* the probe itself at least (half: the pauses are timed once per process) */
    CHECK(s.last_wait_ns >= TS_SPIN_PROBE_LEAST_NS / 2);
    set_probe(0, 10, 0);
    wait_once(&p, WHEN_ASLEEP);
    CHECK_EQ(probe_now().failed, 10);

    /* Oversubscribed (the spin may not grow: settings.c): no probe, which
     * would hold a CPU the awaited participant most likely needs. */
    ts_wait over = block_policy();
    over.spin_iterations = 256; /* TS_SPIN_OVERSUBSCRIBED_DISJOINT */
    set_learned_spin(FLOOR);
    set_probe(0, 5, 0);
    wait_once(&over, WHEN_ASLEEP);
    s = probe_now();
    CHECK(s.due_ns == 0 && s.failed == 5);

    /* The long spin (its most a scheduler slice, past any probe): no
     * probe; spin_learn_missed brings its cap back up by itself. */
    ts_wait slice = block_policy();
    slice.spin_learn_most = most;
    set_learned_spin(FLOOR);
    set_probe(0, 6, 0);
    wait_once(&slice, WHEN_ASLEEP);
    s = probe_now();
    CHECK(s.due_ns == 0 && s.failed == 6);

    /* A spin already as long as the probe (the shortest here): no probe. */
    set_learned_spin(most - 1);
    set_probe(0, 4, 0);
    wait_once(&p, WHEN_ASLEEP);
    s = probe_now();
    CHECK(s.due_ns == 0 && s.failed == 4);
    set_probe(0, 0, 0);
}

static void test_settings(void)
{
    struct resolved r;
    memset(&r, 0, sizeof r);
    r.wait = TOPSYNC_WAIT_BLOCK;
    r.fits_cpus = true;
    r.participants = 2;
    ts_wait w;

    /* unbound, as few as the CPUs: the long spin and the co-location check */
    memset(&w, 0, sizeof w);
    ts_barrier_wait_settings(&w, &r, false, -1);
    CHECK(w.colocation && w.learn);
    CHECK_EQ(w.yield_iterations, 16); /* taken only when co-located */
    CHECK_EQ(w.spin_iterations, ts_wait_pauses_for_ns(TS_SPIN_NS_DEFAULT));
    CHECK_EQ(w.spin_unclocked, ts_wait_pauses_for_ns(TS_SPIN_NS_MOST));
    CHECK(w.spin_learn_most >= ts_wait_pauses_for_ns(ts_wait_slice_ns(1)));
    CHECK(w.spin_learn_most <= ts_wait_pauses_for_ns(ts_wait_slice_ns(8)));

    /* more than a waiter scans: the 32 us cap, no check */
    r.participants = TS_COLOCATION_PEERS_MOST + 1;
    memset(&w, 0, sizeof w);
    ts_barrier_wait_settings(&w, &r, false, -1);
    CHECK(!w.colocation && w.spin_unclocked == 0);
    CHECK_EQ(w.spin_learn_most, ts_wait_pauses_for_ns(TS_SPIN_NS_MOST));
    CHECK_EQ(w.yield_iterations, 0);

    /* bound to CPUs of their own: the same */
    r.participants = 2;
    r.disjoint_cpus = true;
    memset(&w, 0, sizeof w);
    ts_barrier_wait_settings(&w, &r, false, -1);
    CHECK(!w.colocation && w.spin_unclocked == 0);
    CHECK_EQ(w.spin_learn_most, ts_wait_pauses_for_ns(TS_SPIN_NS_MOST));

    /* TOPSYNC_SPIN: fixed, nothing learned, no check */
    r.disjoint_cpus = false;
    memset(&w, 0, sizeof w);
    ts_barrier_wait_settings(&w, &r, false, 100);
    CHECK(!w.colocation && !w.learn && w.spin_unclocked == 0);
    CHECK_EQ(w.spin_iterations, 100);

    /* oversubscribed by other processes, the participants fitting: the
     * short co-located spin, yields whether or not */
    r.oversubscribed = true;
    memset(&w, 0, sizeof w);
    ts_barrier_wait_settings(&w, &r, false, -1);
    CHECK(w.colocation && w.spin_unclocked == 0);
    CHECK_EQ(w.spin_iterations, 256);
    CHECK_EQ(w.spin_learn_most, 0);
    CHECK_EQ(w.yield_iterations, 16);
}

/* Yields after which the waiter ran again only a scheduler slice later
 * (its CPU went to other work: here a busy thread bound to the same CPU)
 * turn that thread's yields off for a while, from the second such yield
 * (wait.c, TS_YIELD_SLOW_NS; every yield of this waiter is slow): its
 * second wait yields nothing, so the yield cap it learned stays where the
 * first wait left it. (Without that rule, the second wait's 8 yields
 * fail too and halve the cap again. No control run without the busy
 * thread: under ctest -j2 another test's thread may make a yield slow.) */
struct slow_yield_run {
    bool busy_neighbour;
    bool long_spin; /* the long spin's waiter, co-located (its spin is 0) */
    int cpu;
    uint32_t cap_after[2];
};
static _Atomic bool hog_stop, hog_running;

static void bind_to(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static void *hog(void *arg)
{
    bind_to(*(int *)arg);
    /* relaxed, both: flags ordering nothing but themselves */
    atomic_store_explicit(&hog_running, true, memory_order_relaxed);
    while (!atomic_load_explicit(&hog_stop, memory_order_relaxed))
        ;
    return NULL;
}

static void *slow_yield_waiter(void *arg)
{
    struct slow_yield_run *run = arg;
    bind_to(run->cpu); /* a new thread: its yields are on */
    ts_wait p = block_policy();
    p.spin_iterations = 0;
    p.yield_iterations = 16;
    p.spin_unclocked = run->long_spin ? 1000 : 0;
    memset(lines, 0, sizeof lines);
    for (int i = 0; i < 2; i++) {
        wait_once(&p, WHEN_ASLEEP);
        run->cap_after[i] = atomic_load_explicit(&lines[0][2].aux, memory_order_relaxed) - 1;
    }
    return NULL;
}

static void slow_yield(struct slow_yield_run *run)
{
    cpu_set_t allowed;
    sched_getaffinity(0, sizeof allowed, &allowed);
    run->cpu = 0;
    while (!CPU_ISSET(run->cpu, &allowed))
        run->cpu++;
    pthread_t h, w;
    atomic_store_explicit(&hog_stop, false, memory_order_relaxed);
    atomic_store_explicit(&hog_running, false, memory_order_relaxed);
    if (run->busy_neighbour) {
        pthread_create(&h, NULL, hog, &run->cpu);
        /* the hog holds the CPU before the waiter's first yield: a slow
         * machine (a sanitizer build) may otherwise start the waiter first,
         * whose yields then find nothing else to run */
        while (!atomic_load_explicit(&hog_running, memory_order_relaxed))
            sched_yield();
    }
    pthread_create(&w, NULL, slow_yield_waiter, run);
    pthread_join(w, NULL);
    atomic_store_explicit(&hog_stop, true, memory_order_relaxed);
    if (run->busy_neighbour)
        pthread_join(h, NULL);
}

static void test_slow_yield(void)
{
    struct slow_yield_run busy = {.busy_neighbour = true};
    slow_yield(&busy);
    CHECK_EQ(busy.cap_after[0], 8); /* the slow yield ended the yields, a failure */
    CHECK_EQ(busy.cap_after[1], 8); /* none in the second wait */
    /* The long spin's co-located waiter too, for a shorter time (wait.h,
     * ts_yields_off_ns: 8 slices, still off at the second wait). Before,
     * it yielded on to the hog, a slice each time. */
    struct slow_yield_run colocated = {.busy_neighbour = true, .long_spin = true};
    slow_yield(&colocated);
    CHECK_EQ(colocated.cap_after[0], 8);
    CHECK_EQ(colocated.cap_after[1], 8);
}

/* How long yields stay off after a slow one: 256 times as long, 8 in the
 * long spin (wait.h). */
static void test_yields_off_time(void)
{
    CHECK_EQ(ts_yields_off_ns(4000000, 0), 256u * 4000000);
    CHECK_EQ(ts_yields_off_ns(4000000, 1000), 8u * 4000000);
}

/* The evidence the slow-yield rule waits for (wait.h, ts_yield_record):
 * a second slow yield among a thread's last 64, not one now and then. */
static void test_yield_record(void)
{
    uint64_t history = 0;
    CHECK(!ts_yield_record(&history, true)); /* one slow yield: yields stay on */
    for (int i = 0; i < 62; i++)
        CHECK(!ts_yield_record(&history, false));
    CHECK(ts_yield_record(&history, true)); /* the second within 64: off */
    history = 0;
    CHECK(!ts_yield_record(&history, true));
    for (int i = 0; i < 63; i++)
        CHECK(!ts_yield_record(&history, false));
    CHECK(!ts_yield_record(&history, true));  /* the first has left the window */
    CHECK(!ts_yield_record(&history, false)); /* a fast yield never turns them off */
    CHECK(ts_yield_record(&history, true));
}

static void test_slice(void)
{
    /* EEVDF's base slice, 0.75 ms x (1 + log2 of the CPUs, up to 8) */
    CHECK_EQ(ts_wait_slice_ns(0), 750000);
    CHECK_EQ(ts_wait_slice_ns(1), 750000);
    CHECK_EQ(ts_wait_slice_ns(2), 1500000);
    CHECK_EQ(ts_wait_slice_ns(3), 1500000);
    CHECK_EQ(ts_wait_slice_ns(4), 2250000);
    CHECK_EQ(ts_wait_slice_ns(7), 2250000);
    CHECK_EQ(ts_wait_slice_ns(8), 3000000);
    CHECK_EQ(ts_wait_slice_ns(256), 3000000);
}

int main(void)
{
    test_learning_from_the_time_waited();
    test_colocation();
    test_long_spin_on_the_partners_cpu();
    test_eager_hook();
    test_spin_probe();
    test_settings();
    test_slice();
    test_yield_record();
    test_yields_off_time();
    test_slow_yield();
    return check_summary();
}
