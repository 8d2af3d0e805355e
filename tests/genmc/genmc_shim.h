/*
 * What GenMC cannot run, shimmed for the harnesses of tests/genmc; each
 * harness includes this first, then the library's own .c files.
 *
 *  - __builtin_ia32_pause (ts_cpu_relax) and sched_yield: no-ops; a loop
 *    around them is a spin loop, which --check-liveness inspects.
 *  - futex: genmc_futex_syscall() stands for syscall(SYS_futex, ...): a
 *    wait really sleeps until a wake on its word (see genmc_futex_wait()),
 *    so a lost wake-up is a thread asleep forever, which --check-liveness
 *    reports; -DNO_WAKE loses every wake (the mutant each sleeping harness
 *    must catch); -DFUTEX_SPURIOUS makes every wait return at once instead,
 *    as a spurious wake-up may (cheaper: it checks the callers' recheck
 *    loops with more threads, but cannot see a lost wake-up).
 *  - WEAKEN_IN: a function name (-DWEAKEN_IN=ts_rcl_signal_stop). Every
 *    fence in that function is dropped and every ordered load, store,
 *    exchange, CAS and fetch-op in it becomes relaxed: the weakened variant
 *    each harness keeps, which GenMC must catch. __func__ names the function the macro expands
 *    in, so one site of the real code is weakened and nothing else. With
 *    WEAKEN_FENCES_ONLY, only the fences of that function are dropped.
 */
#ifndef TOPSYNC_TESTS_GENMC_SHIM_H
#define TOPSYNC_TESTS_GENMC_SHIM_H

#include <genmc.h>
#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* GenMC's assert.h has no static_assert, its pthread.h no condition
 * variable (the code under test declares one but never waits on it here) */
#ifndef static_assert
#define static_assert _Static_assert
#endif
typedef struct {
    int unused;
} pthread_cond_t;
/* nor thread-specific data or once: single-use stand-ins (a client slot's
 * release at thread exit is not what the harnesses check) */
typedef int pthread_key_t;
typedef _Atomic int pthread_once_t;
#define pthread_key_create(key, destructor) ((void)(key), (void)(destructor), 0)
#define pthread_setspecific(key, value) ((void)(key), (void)(value), 0)
#define pthread_once(once, fn) \
    (__c11_atomic_exchange(once, 1, memory_order_seq_cst) ? 0 : ((fn)(), 0))

/* GenMC's stdlib.h has no calloc, and zeroing a block byte by byte makes
 * the wider reads that follow "mixed-size accesses": calloc (and malloc)
 * hand out static memory instead, which is zero from the start (only set-up
 * code allocates, and the harnesses never free it). */
static unsigned char genmc_pool[16384] __attribute__((aligned(64)));
static _Atomic size_t genmc_pool_used; /* clients allocate concurrently */
static inline void *genmc_calloc(size_t n, size_t size)
{
    size_t bytes = (n * size + 63) / 64 * 64;
    size_t at = __c11_atomic_fetch_add(&genmc_pool_used, bytes, memory_order_relaxed);
    return at + bytes <= sizeof genmc_pool ? genmc_pool + at : NULL;
}
#define calloc(n, size) genmc_calloc(n, size)
#undef malloc
#define malloc(size) genmc_calloc(1, size)
#undef free
#define free(p) ((void)(p))
/* set-up code only: a first allocation (NULL), memory fresh from the pool */
#define realloc(p, size) ((p) ? NULL : genmc_calloc(1, size))
#define posix_memalign(out, align, size) ((*(out) = genmc_calloc(1, size)) ? 0 : 12)
#define memset(p, c, n) ((void)(c), (void)(n), (p)) /* pool memory is zero already */

/* Errors are not what these harnesses check: ts_fail (error.c) just returns */
int ts_fail(int err, const char *fmt, ...)
{
    (void)fmt;
    return -err;
}

#define __builtin_ia32_pause() ((void)0)

/* The pause's cost is measured with a timed loop of pauses
 * (src/wait/pause_cost.c), which GenMC cannot run: a pause is free here. */
uint32_t ts_wait_pauses_for_ns(uint64_t ns)
{
    (void)ns;
    return 16;
}
double ts_wait_pause_ns(void)
{
    return 1.0;
}
#undef sched_yield
#define sched_yield() 0

/* Whether func (a __func__) is the function a mutant option names. */
#define GENMC_STRING_(x) #x
#define GENMC_STRING(x) GENMC_STRING_(x)
static inline int genmc_named(const char *func, const char *named)
{
    while (*func && *func == *named) {
        func++;
        named++;
    }
    return *func == *named;
}

#ifdef WEAKEN_IN
#define genmc_weak_here(func) genmc_named(func, GENMC_STRING(WEAKEN_IN))
#undef atomic_thread_fence
#define atomic_thread_fence(o)            \
    do {                                  \
        if (!genmc_weak_here(__func__))   \
            __c11_atomic_thread_fence(o); \
    } while (0)
#ifndef WEAKEN_FENCES_ONLY /* else: the fences only, the orders kept */
#define GENMC_ORDER(o) (genmc_weak_here(__func__) ? memory_order_relaxed : (o))
#undef atomic_load_explicit
#define atomic_load_explicit(p, o) __c11_atomic_load(p, GENMC_ORDER(o))
#undef atomic_store_explicit
#define atomic_store_explicit(p, v, o) __c11_atomic_store(p, v, GENMC_ORDER(o))
#undef atomic_exchange_explicit
#define atomic_exchange_explicit(p, v, o) __c11_atomic_exchange(p, v, GENMC_ORDER(o))
#undef atomic_fetch_add_explicit
#define atomic_fetch_add_explicit(p, v, o) __c11_atomic_fetch_add(p, v, GENMC_ORDER(o))
#undef atomic_fetch_sub_explicit
#define atomic_fetch_sub_explicit(p, v, o) __c11_atomic_fetch_sub(p, v, GENMC_ORDER(o))
#undef atomic_compare_exchange_strong_explicit
#define atomic_compare_exchange_strong_explicit(p, e, v, s, f) \
    __c11_atomic_compare_exchange_strong(p, e, v, GENMC_ORDER(s), memory_order_relaxed)
#endif /* WEAKEN_FENCES_ONLY */
#endif /* WEAKEN_IN */

/* -DSPLIT_CAS_IN=<function>: that function's compare-exchanges become a
 * load, a compare and a store, each atomic but not the three together: the
 * mutant of a claim whose exclusivity rests on the read-modify-write. */
#ifdef SPLIT_CAS_IN
#define genmc_split_here(func) genmc_named(func, GENMC_STRING(SPLIT_CAS_IN))
#undef atomic_compare_exchange_strong_explicit
#define atomic_compare_exchange_strong_explicit(p, e, v, s, f)                     \
    (genmc_split_here(__func__) ? ({                                               \
        __typeof__(*(e)) genmc_seen_ = __c11_atomic_load(p, memory_order_relaxed); \
        int genmc_equal_ = genmc_seen_ == *(e);                                    \
        if (genmc_equal_)                                                          \
            __c11_atomic_store(p, v, memory_order_relaxed);                        \
        else                                                                       \
            *(e) = genmc_seen_;                                                    \
        genmc_equal_;                                                              \
    })                                                                             \
                                : __c11_atomic_compare_exchange_strong(p, e, v, s, f))
#endif /* SPLIT_CAS_IN */

/* The futex, as the kernel gives it: a wait compares the word and goes to
 * sleep in one step under the hash bucket's lock; it returns only after a
 * futex_wake on that same word that came after it (no spurious wake-ups,
 * so a lost wake-up is a thread asleep forever, which --check-liveness
 * reports). A timed wait returns at once, as its timeout may. The mutex is
 * the bucket lock: a waker's store to the word is sequenced before its
 * wake, so either the waiter's compare sees the store or the wake sees the
 * waiter. Each word has its own wake count; the slots are allocated on
 * first use (GENMC_FUTEX_WORDS words per harness). */
#ifndef GENMC_FUTEX_WORDS
#define GENMC_FUTEX_WORDS 8
#endif
static pthread_mutex_t genmc_futex_bucket = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uint32_t *genmc_futex_word[GENMC_FUTEX_WORDS]; /* under the bucket lock */
static _Atomic unsigned genmc_futex_wakes[GENMC_FUTEX_WORDS];

static inline unsigned genmc_futex_slot(_Atomic uint32_t *addr)
{
    unsigned i = 0;
    while (i < GENMC_FUTEX_WORDS && genmc_futex_word[i] && genmc_futex_word[i] != addr)
        i++;
    assert(i < GENMC_FUTEX_WORDS && "raise GENMC_FUTEX_WORDS");
    genmc_futex_word[i] = addr;
    return i;
}

static inline void genmc_futex_wait(_Atomic uint32_t *addr, uint32_t expected, int timed)
{
#ifdef FUTEX_SPURIOUS /* every wait returns at once, as a spurious wake-up may */
    (void)addr;
    (void)expected;
    (void)timed;
    return;
#endif
    if (timed)
        return;
    pthread_mutex_lock(&genmc_futex_bucket);
    if (__c11_atomic_load(addr, memory_order_relaxed) != expected) {
        pthread_mutex_unlock(&genmc_futex_bucket); /* EAGAIN */
        return;
    }
    unsigned slot = genmc_futex_slot(addr);
    unsigned seen = __c11_atomic_load(&genmc_futex_wakes[slot], memory_order_relaxed);
    pthread_mutex_unlock(&genmc_futex_bucket);
    while (__c11_atomic_load(&genmc_futex_wakes[slot], memory_order_relaxed) == seen)
        ; /* asleep */
    /* Woken: the kernel takes the bucket lock again to dequeue the waiter.
     * Modelled, because the lock's write also ends this spin loop's last
     * iteration for GenMC, which counts iterations per thread, not per
     * loop: without it, the caller's loop around futex_wait (ts_wait_slow)
     * would look like a loop that read an unchanged value. */
    pthread_mutex_lock(&genmc_futex_bucket);
    pthread_mutex_unlock(&genmc_futex_bucket);
}

static inline void genmc_futex_wake(_Atomic uint32_t *addr)
{
#ifndef NO_WAKE /* the mutant: every futex_wake lost */
    pthread_mutex_lock(&genmc_futex_bucket);
    unsigned slot = genmc_futex_slot(addr);
    __c11_atomic_store(&genmc_futex_wakes[slot],
                       __c11_atomic_load(&genmc_futex_wakes[slot], memory_order_relaxed) + 1,
                       memory_order_relaxed);
    pthread_mutex_unlock(&genmc_futex_bucket);
#else
    (void)addr;
#endif
}

/* syscall(SYS_futex, ...) as wait.c makes it */
#define genmc_futex_syscall(addr, op, val, timeout)                                              \
    (((op) == FUTEX_WAIT || (op) == FUTEX_WAIT_PRIVATE)                                          \
         ? (genmc_futex_wait((_Atomic uint32_t *)(addr), (uint32_t)(val), (timeout) != NULL), 0) \
         : (genmc_futex_wake((_Atomic uint32_t *)(addr)), 0))

/* The system calls of the code under test, for every harness: the futex
 * (above), a clock that stays at 0 (no deadline or idle hook is ever due),
 * and no CPU number (the adaptive spin and the RCL client's guess take
 * their "unknown" path). After the headers that declare them. */
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#define syscall(nr, addr, op, val, timeout, a5, a6) genmc_futex_syscall(addr, op, val, timeout)
#define clock_gettime(clock, ts) ((ts)->tv_sec = 0, (ts)->tv_nsec = 0, 0)
#undef sched_getcpu
#define sched_getcpu() (-1)

/* The participants of a harness: participant(0) on the main thread, 1 to
 * n - 1 on threads of their own, all joined. */
#define GENMC_MAX_PARTICIPANTS 4
static inline void genmc_run_participants(void *(*participant)(void *), unsigned n)
{
    pthread_t t[GENMC_MAX_PARTICIPANTS];
    assert(n <= GENMC_MAX_PARTICIPANTS);
    for (unsigned r = 1; r < n; r++)
        pthread_create(&t[r], NULL, participant, (void *)(uintptr_t)r);
    participant((void *)0);
    for (unsigned r = 1; r < n; r++)
        pthread_join(t[r], NULL);
}

#endif
