/*
 * What GenMC cannot run, shimmed for the harnesses of tests/genmc; each
 * harness includes this first, then the library's own .c files.
 *
 *  - __builtin_ia32_pause (ts_cpu_relax) and sched_yield: no-ops; a loop
 *    around them is a spin loop, which --check-liveness inspects.
 *  - futex: genmc_futex_wait() without a timeout spins while the word holds
 *    the expected value (a wake-up always follows a change of the word in
 *    topsync, so this is the futex's contract as the callers use it); with
 *    a timeout it returns at once (the callers recheck). rcl_stop.c and
 *    rcl_request.c sleep the idle server with it. barrier.c maps wait.c's
 *    futex_wait to an immediate return instead (a spurious wake-up): the
 *    loop of ts_wait_slow() is then the spin loop --check-liveness
 *    inspects, since GenMC 0.9 misjudges a spin loop nested in another.
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
typedef struct { int unused; } pthread_cond_t;
/* nor thread-specific data or once: single-use stand-ins (a client slot's
 * release at thread exit is not what the harnesses check) */
typedef int pthread_key_t;
typedef _Atomic int pthread_once_t;
#define pthread_key_create(key, destructor) ((void)(key), (void)(destructor), 0)
#define pthread_setspecific(key, value) ((void)(key), (void)(value), 0)
#define pthread_once(once, fn)                                                           \
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
#undef sched_yield
#define sched_yield() 0

#ifdef WEAKEN_IN
#define GENMC_STRING_(x) #x
#define GENMC_STRING(x) GENMC_STRING_(x)
static inline int genmc_weak_here(const char *func)
{
    const char *w = GENMC_STRING(WEAKEN_IN);
    while (*func && *func == *w) {
        func++;
        w++;
    }
    return *func == *w;
}
#undef atomic_thread_fence
#define atomic_thread_fence(o)                                                           \
    do {                                                                                 \
        if (!genmc_weak_here(__func__))                                                  \
            __c11_atomic_thread_fence(o);                                                \
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
#define atomic_compare_exchange_strong_explicit(p, e, v, s, f)                           \
    __c11_atomic_compare_exchange_strong(p, e, v, GENMC_ORDER(s), memory_order_relaxed)
#endif /* WEAKEN_FENCES_ONLY */
#endif /* WEAKEN_IN */

/* The futex as topsync uses it (see above). */
static inline void genmc_futex_wait(_Atomic uint32_t *addr, uint32_t expected, int timed)
{
    if (timed)
        return;
    while (__c11_atomic_load(addr, memory_order_relaxed) == expected)
        ;
}

#endif
