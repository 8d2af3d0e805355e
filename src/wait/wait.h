/*
 * Private: the word every topsync flag and counter is made of, and how a
 * participant waits for one.
 * The why: docs/design.md section 8.1.
 */
#ifndef TOPSYNC_SRC_WAIT_H
#define TOPSYNC_SRC_WAIT_H

#include <assert.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <topsync/wait.h>

/* ThreadSanitizer's build swaps a fence for re-loads (ts_wait_all). Not in
 * the simulator's copy of the algorithms (model/sim_atomic.h): it predicts
 * the code that runs on hardware, the same in every build. */
#ifndef TS_SIMULATED_COPY
#if defined(__SANITIZE_THREAD__)
#define TS_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TS_TSAN 1
#endif
#endif
#endif

typedef struct ts_word {
    _Atomic uint32_t value;
    /* Keeps MCS child slots 8 bytes apart. In line 0 of a rank block: the
     * CPU its participant last entered a wait on, + 1 (0: not known), for
     * the co-location check below. */
    _Atomic uint32_t aux;
} ts_word;

static_assert(sizeof(ts_word) == 8, "a ts_word is 8 bytes");
static_assert(4 * sizeof(ts_word) <= 32, "four MCS child words fit the smallest line we accept");

#define TS_SLEEPING 0x80000000u
#define TS_EPISODE_MASK 0x7fffffffu

enum ts_wait_kind { TS_WAIT_SPIN = 1, TS_WAIT_YIELD = 2, TS_WAIT_BLOCK = 3 };

typedef struct ts_wait {
    enum ts_wait_kind kind;
    uint32_t spin_iterations;  /* pauses before yielding / sleeping (the most, when learning) */
    uint32_t yield_iterations; /* yields before sleeping (block; the most, when learning) */
    bool process_shared;       /* futex without FUTEX_PRIVATE_FLAG */
    uint64_t timeout_ns;       /* 0: wait forever; else see ts_timeout_target */
    uint64_t idle_ns;          /* longest period of idle() in the slow path (see clock_check) */
    /* Co-location check: spin none when another participant was last seen
     * on this CPU (it may need this very CPU); peers' CPU words at
     * peer_base + r * peer_stride, r < npeers; the waiter's rank is
     * ts_wait_rank. */
    bool colocation;
    const unsigned char *peer_base;
    size_t peer_stride;
    unsigned npeers;
    /* NULL: none; TOPSYNC_IDLE_AGAIN: call again soon; other non-zero: unwind */
    int (*idle)(void *);
    void *idle_arg;
    /* ts_wait_all waits for one word after another (TOPSYNC_POLL=ordered)
     * instead of scanning them all (the default) */
    bool ordered_poll;
    /* Learn, per participant, how much of the spin and of the yields pays
     * (ts_wait_learned, below): a partner that is not running (unbound
     * threads, CPUs busy with other work) makes spins and yields fail, and
     * the waiter then goes to the futex sooner. */
    bool learn;
    /* Learning: how far the spin may grow while it keeps succeeding (0:
     * spin_iterations, which is where it starts) */
    uint32_t spin_learn_most;
    /* Pauses of the spin during which neither the deadline nor the idle
     * hook is looked at (0: the whole spin); past them, a longer spin
     * checks both every 32 pauses. Non-zero marks the long spin
     * (TS_SLICE_NS_BASE), whose waiter yields only when the co-location
     * check found another participant on its CPU: a spin that ran out
     * goes to the futex. */
    uint32_t spin_unclocked;
} ts_wait;

/*
 * The participant's learned limits, in words its owner alone writes (line 0
 * of its rank block, words 1 to 3; the barrier's TS_MIN_LINE keeps them in
 * it): aux of learned[0] is the spin cap + 1, aux of learned[1] the yield
 * cap + 1 (0: nothing learned yet, the policy's most), aux of learned[2]
 * counts waits since the last probe of a zero yield cap; their value
 * fields are not used (fill_block owns them). Set
 * by topsync_barrier_wait before the algorithm's wait when policy->learn;
 * NULL (RCL, GenMC): no learning.
 */
/* initial-exec: a thread-local access without a __tls_get_addr call on
 * every barrier (the library's TLS is static when linked; glibc keeps
 * room for a small block in a dlopen()ed one) */
#define TS_TLS_INITIAL_EXEC __attribute__((tls_model("initial-exec")))
extern TS_TLS_INITIAL_EXEC _Thread_local ts_word *ts_wait_learned;
/* The spin bound in time (the default for waiters with a CPU of their own,
 * docs/design.md section 2, "The spin"): converted to pauses with the
 * measured cost of one pause on this machine. */
#define TS_SPIN_NS_DEFAULT 4000u
/* How far it grows while spins keep succeeding (a partner on a CPU of its
 * own that the hypervisor or an interrupt holds up a little longer now and
 * then): about the cost of a futex sleep and wake-up, the competitive
 * bound. */
#define TS_SPIN_NS_MOST 32000u
/* How far it grows when the participants are as few as the CPUs but not
 * bound apart, and none was last seen on the waiter's CPU (unbound threads
 * on a node busy with other work): the partner that other work preempted
 * comes back within a scheduler slice of it, so a spin that lasts one
 * catches it still running where a futex sleep would have to preempt
 * that work to be woken (issue 35: 2 unbound threads beside 2 CPU hogs,
 * 4.5-4.8 us per barrier with the 32 us cap, 87-493 ns with an 8 ms spin,
 * libgomp's 490-1276 ns; libgomp spins 300000 pauses). Linux's EEVDF slice
 * (kernel/sched/fair.c, sysctl_sched_base_slice): 0.75 ms times
 * 1 + log2 of the online CPUs, at most 8 of them counted. */
#define TS_SLICE_NS_BASE 750000u
static inline uint64_t ts_wait_slice_ns(unsigned online_cpus)
{
    unsigned counted = online_cpus < 8 ? online_cpus : 8, log2 = 0;
    while ((2u << log2) <= counted)
        log2++;
    return (uint64_t)TS_SLICE_NS_BASE * (1 + log2);
}
/* The slow-yield rule's evidence (wait.c, TS_YIELD_SLOW_NS): the last 64
 * yields of a thread, a bit each (1: slow, its CPU went to other work for
 * a slice), newest in bit 0. Records one yield; true when it is slow and
 * at least TS_YIELDS_SLOW_TO_OFF of those 64 were: then the yields go off.
 * One slow yield now and then (8 unbound threads on 2 idle CPUs, the slice
 * taken by one of their own spinning) does not turn them off; under a CPU
 * hog most yields are slow. */
#define TS_YIELDS_SLOW_TO_OFF 2
static inline bool ts_yield_record(uint64_t *history, bool slow)
{
    *history = *history << 1 | (uint64_t)slow;
    return slow && __builtin_popcountll(*history) >= TS_YIELDS_SLOW_TO_OFF;
}
/* How long a thread's yields stay off after the slow yield that turned
 * them off (wait.c, TS_YIELD_SLOW_NS), which took slow_ns: 256 times as
 * long, so that such yields cost at most 1/257 of the time; 8 times in the
 * long spin (spin_unclocked), whose waiter yields only when co-located
 * with its partner. There a slow yield means a CPU hog shares the pair's
 * CPU, and the placement that follows (the hog moved away, the pair left
 * alone on a CPU, yields handing it back and forth in well under a
 * microsecond) is worth catching within tens of milliseconds. Measured
 * (issue 35; 2 unbound threads beside 2 CPU hogs on 2 CPUs, fresh threads
 * and barrier per start): never off there, the first 100 barriers of a
 * start took 565-773 us each on average (155 yields of 3.9 ms, the hogs'
 * slices, in 10 starts), and in half the 100 ms windows the pair made 700
 * round trips a second, against 100000-140000 with glibc's barrier; 8
 * times: 105 us (26 slow yields), and 44000-52000 round trips a second in
 * those windows, the others alike (0.6-3 million). */
#define TS_YIELDS_OFF_FACTOR 256u
#define TS_YIELDS_OFF_FACTOR_COLOCATED 8u
static inline uint64_t ts_yields_off_ns(uint64_t slow_ns, uint32_t spin_unclocked)
{
    return slow_ns * (spin_unclocked ? TS_YIELDS_OFF_FACTOR_COLOCATED : TS_YIELDS_OFF_FACTOR);
}
/* Participants of one barrier whose CPUs a waiter scans (the co-location
 * check, slow path): beyond, the long spin is off. */
#define TS_COLOCATION_PEERS_MOST 8u
/* The cost of one ts_cpu_relax() here in ns, measured once per process
 * (the least of a few timed runs of pauses), unless this thread fixed it. */
double ts_wait_pause_ns(void);
/* Fixes this thread's pause cost at ns (0: back to the measured one) and
 * returns what it was fixed at before (0: nothing). For the simulator
 * (model/sim_barrier.c), whose conversions of a spin bound must be the
 * simulated machine's, the same in every process. */
double ts_wait_pause_ns_fix(double ns);
/* Pauses that last about ns on this machine, clamped to [16, 1 << 20]. */
uint32_t ts_wait_pauses_for_ns(uint64_t ns);
/* This thread's spin probe (wait.c, "The spin probe"): when the next is
 * due (CLOCK_MONOTONIC ns; 0: at the next spin that runs out), how many
 * failed in a row, and the last wait that a spin did not end (spin
 * included), whose double the next probe lasts. Read and set by the unit
 * tests. */
struct ts_spin_probe {
    uint64_t due_ns;
    unsigned failed;
    uint64_t last_wait_ns;
};
void ts_wait_spin_probe_get(struct ts_spin_probe *out);
void ts_wait_spin_probe_set(const struct ts_spin_probe *in);
/* A probe's bounds: at least the spin's most (a futex sleep and wake-up
 * on bare metal); at most 4 times the slowest wake-ups measured here (a
 * VM's idle vCPU: glibc's barrier, one wake-up each, took 40-60 us). */
#define TS_SPIN_PROBE_LEAST_NS TS_SPIN_NS_MOST
#define TS_SPIN_PROBE_MOST_NS 256000u
/* The least a learned spin cap falls to, in pauses (wait.c, "Learning"):
 * it keeps probing, under a microsecond. The simulator learns the same. */
#define TS_ADAPTIVE_SPIN_FLOOR 16u

/*
 * The spin's learning rules, in one place for the library (wait.c) and the
 * simulator (model/sim_engine.c), which must learn alike. Pure: the caller
 * reads and stores the participant's cap.
 */

/* How far a learned spin may grow: the policy's most, or its start when
 * that is more. */
static inline uint32_t ts_spin_most(const ts_wait *p)
{
    return p->spin_learn_most > p->spin_iterations ? p->spin_learn_most : p->spin_iterations;
}

/* The cap after a spin of `spin` pauses that ended the wait: doubled when
 * it caught the word (caught), halved when a partner on its CPU ended it
 * (wait.c, spun_on_partners_cpu); within [TS_ADAPTIVE_SPIN_FLOOR, most]. */
static inline uint32_t ts_spin_cap_after_catch(const ts_wait *p, uint32_t spin, bool caught)
{
    uint32_t most = ts_spin_most(p);
    uint32_t cap = caught ? 2 * spin : spin / 2;
    if (cap < TS_ADAPTIVE_SPIN_FLOOR)
        cap = TS_ADAPTIVE_SPIN_FLOOR;
    return cap > most ? most : cap;
}

/* A learned cap as its participant's word holds it (wait.c: the word is
 * cap + 1, 0 while nothing was learned): `initial` while nothing was
 * learned, never above `most`. */
static inline uint32_t ts_spin_cap_learned(uint32_t stored, uint32_t initial, uint32_t most)
{
    return stored == 0 ? initial : stored - 1 > most ? most : stored - 1;
}

/* How long a spin of `spin` pauses lasts, at this process's pause cost. */
static inline uint64_t ts_spin_ns(uint32_t spin)
{
    return (uint64_t)((double)spin * ts_wait_pause_ns());
}

/* The cap after a spin of `spin` pauses that ran out, in a wait that
 * lasted wait_ns in all (the spin, ts_spin_ns, and what followed it): had
 * a spin of the whole wait (twice it: the wake-up is in the figure, and
 * the margin errs towards spinning) fitted within the most, it would have
 * ended the wait, and the cap becomes that; a longer wait halves the cap.
 * Never below TS_ADAPTIVE_SPIN_FLOOR. Learning from the time waited, not
 * from the spin's outcome alone, brings a cap that fell to the floor back
 * up (a spin of 16 pauses never catches a partner that takes a
 * microsecond: the cap would stay there for good). */
static inline uint32_t ts_spin_cap_after_miss(const ts_wait *p, uint32_t spin, uint64_t wait_ns)
{
    uint32_t would = ts_wait_pauses_for_ns(2 * wait_ns);
    uint32_t cap = would <= ts_spin_most(p) ? would : spin / 2;
    return cap < TS_ADAPTIVE_SPIN_FLOOR ? TS_ADAPTIVE_SPIN_FLOOR : cap;
}

/*
 * Liveness (TOPSYNC_TIMEOUT). When a slow-path wait with timeout_ns set has
 * lasted that long, it longjmp()s to *ts_timeout_target, which the caller
 * (barrier.c, wait_with_timeout) armed around the algorithm's wait; unarmed,
 * it prints a message and aborts. The fast path is untouched: the deadline
 * is taken on entering the slow path. The idle hook's non-zero return
 * unwinds the same way, with longjmp value TS_UNWIND_IDLE.
 */
enum { TS_UNWIND_TIMEOUT = 1, TS_UNWIND_IDLE = 2 };
extern _Thread_local jmp_buf *ts_timeout_target;
/* The rank of the participant this thread waits as (set by
 * topsync_barrier_wait when the policy checks co-location). */
extern _Thread_local unsigned ts_wait_rank;

/* Has a word holding `value` reached `episode`? (31-bit wrap-safe) */
static inline bool ts_reached(uint32_t value, uint32_t episode)
{
    return (int32_t)(((value - episode) & TS_EPISODE_MASK) << 1) >= 0;
}

static inline void ts_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#else
    atomic_signal_fence(memory_order_seq_cst);
#endif
}

/* Slow path of ts_wait_reach (out of line: it is the cold part). */
void ts_wait_slow(ts_word *w, uint32_t episode, const ts_wait *policy);
/* Sleep on *addr while it holds `expected`, for at most timeout_ns (0: no
 * limit). Returns on a wake-up, a changed value, a signal or the timeout:
 * callers recheck. The one futex_wait of topsync (barriers and RCL). */
void ts_futex_wait(_Atomic uint32_t *addr, uint32_t expected, bool process_shared,
                   uint64_t timeout_ns);
/* Wake every sleeper on *addr. */
void ts_futex_wake(_Atomic uint32_t *addr, bool process_shared);

/*
 * Wait until w has reached `episode`. Acquire: pairs with the release in the
 * ts_publish() that stored a value >= episode, so everything the publisher
 * did before publishing is visible after return.
 */
static inline void ts_wait_reach(ts_word *w, uint32_t episode, const ts_wait *policy)
{
    /* acquire: pairs with the release store/exchange in ts_publish() */
    if (ts_reached(atomic_load_explicit(&w->value, memory_order_acquire), episode))
        return;
    ts_wait_slow(w, episode, policy);
}

/*
 * Wait until every word of words[0..n) has reached `episode`: a leader
 * waiting for its members (the paper's leader loop, design.md section 2).
 * Each pass reads, with relaxed loads, the first word not yet seen reached
 * and every word after it, so that a core overlaps their misses instead of
 * taking them one after another (the words seen reached stay valid in its
 * cache: re-reading them is a hit). A pass that saw no new arrival hands
 * the first missing word to the wait policy (ts_wait_slow: spin, yield,
 * sleep), and scanning resumes once it has arrived.
 *
 * Acquire: the fence after the last word was seen reached pairs with the
 * release in each publisher's ts_publish(); the relaxed loads before it
 * read those releases' values, so everything each publisher did before
 * publishing is visible after return.
 *
 * With policy->ordered_poll: ts_wait_reach on one word after another, one
 * acquire load each (topsync's loop before the scan, kept to measure it).
 */
static inline void ts_wait_all(ts_word *const *words, unsigned n, uint32_t episode,
                               const ts_wait *policy)
{
    if (policy->ordered_poll) {
        for (unsigned i = 0; i < n; i++)
            ts_wait_reach(words[i], episode, policy); /* pairs with words[i]'s publish */
        return;
    }
    unsigned first = 0; /* words[0..first) were seen reached */
    unsigned seen = 0;  /* arrivals counted by the last pass */
    for (;;) {
        /* relaxed: ordered by the fence below */
        while (
            first < n &&
            ts_reached(atomic_load_explicit(&words[first]->value, memory_order_relaxed), episode))
            first++;
        if (first == n)
            break;
        unsigned arrived = first;
        for (unsigned i = first + 1; i < n; i++) /* relaxed: ordered by the fence below */
            arrived +=
                ts_reached(atomic_load_explicit(&words[i]->value, memory_order_relaxed), episode);
        if (arrived > seen) {
            seen = arrived;
            continue;
        }
        /* no progress: the policy's wait, which returns once the word has
         * reached the episode */
        ts_wait_slow(words[first], episode, policy);
        first++;
    }
#ifndef TS_TSAN
    /* acquire: pairs with the release store/exchange of every word's ts_publish() */
    atomic_thread_fence(memory_order_acquire);
#else
    /* ThreadSanitizer does not model fences: the same order, as it sees it,
     * by an acquire re-load of every word (each reads the published value
     * the scan saw, or a later one of its release sequence). GenMC checks
     * the fence itself (tests/genmc, *.scan-no-fence). */
    for (unsigned i = 0; i < n; i++)
        (void)atomic_load_explicit(&words[i]->value, memory_order_acquire);
#endif
}

/*
 * Store `episode` into w (clearing TS_SLEEPING) and wake sleepers when the
 * policy can sleep. Release: pairs with the acquire loads in ts_wait_reach()
 * and ts_wait_slow().
 */
static inline void ts_publish(ts_word *w, uint32_t episode, const ts_wait *policy)
{
    uint32_t v = episode & TS_EPISODE_MASK;
    if (policy->kind != TS_WAIT_BLOCK) {
        /* release: pairs with the acquire in ts_wait_reach() / ts_wait_slow() */
        atomic_store_explicit(&w->value, v, memory_order_release);
        return;
    }
    /* release: pairs with the acquire in ts_wait_reach() / ts_wait_slow();
     * ordered against the waiter's CAS by the word's modification order */
    uint32_t old = atomic_exchange_explicit(&w->value, v, memory_order_release);
    if (old & TS_SLEEPING)
        ts_futex_wake(&w->value, policy->process_shared);
}

/* Resolve TOPSYNC_WAIT_DEFAULT (TOPSYNC_WAIT, else block) and validate a
 * policy value; 0 or -EINVAL with a message listing the valid ones. Both the
 * barrier and the RCL runtime take their policy through it. */
int ts_wait_policy_resolve(topsync_wait_policy_t *policy);

/* Initial value of a flag at `episode` completed episodes. */
static inline uint32_t ts_flag_initial(uint64_t episode)
{
    return (uint32_t)episode & TS_EPISODE_MASK;
}

#endif
