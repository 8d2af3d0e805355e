/*
 * Private: the simulated-atomics layer. CMake compiles every algorithm file
 * (src/barrier/algorithms/NAME.c) twice: once as it is, for the library, and once with
 * this header forced in front of it (-include), for the simulator. The
 * second copy is the same code: only the atomic operations on 32-bit words
 * and the out-of-line halves of the wait change meaning.
 *
 *  - atomic_load/store/exchange/fetch_add/compare_exchange_explicit on an
 *    _Atomic uint32_t become calls into the simulation engine
 *    (sim_engine.c), which turns each into an event in virtual time when
 *    the word lies in the segment of the barrier being simulated, and
 *    performs the plain operation otherwise (set-up code, other memory).
 *    Any other operand type is a compile error (_Generic without a
 *    default), so a new kind of atomic in an algorithm cannot slip past
 *    the simulator unseen.
 *  - ts_wait_slow, the slow path of ts_wait_reach (wait.c), becomes
 *    ts_sim_wait_slow: a waiter parks on the word's line until somebody
 *    writes it, which is what a spinning core costs in the model.
 *  - The algorithm objects (TS_ALGO(X), ts_algo_X) are named ts_sim_algo_X, so that
 *    both copies live in one library; sim_barrier.c builds its table of them.
 *
 * The simulator executes one event at a time (sequential consistency) in
 * virtual-time order; weak-memory behaviour is GenMC's to check
 * (tests/genmc), timing is the simulator's. Memory orders matter only to
 * the timing of loads: a relaxed load may leave its miss outstanding while
 * the participant goes on (memory-level parallelism), an acquire load waits
 * for its line, and atomic_thread_fence (also an event here) waits for
 * every outstanding miss.
 */
#ifndef TOPSYNC_SRC_MODEL_SIM_ATOMIC_H
#define TOPSYNC_SRC_MODEL_SIM_ATOMIC_H

#include "model/sim_events.h"

#undef atomic_load_explicit
#undef atomic_store_explicit
#undef atomic_exchange_explicit
#undef atomic_fetch_add_explicit
#undef atomic_compare_exchange_strong_explicit
#undef atomic_compare_exchange_weak_explicit
#undef atomic_thread_fence

#define atomic_load_explicit(p, order)                                                  \
    (_Generic((p), _Atomic uint32_t *: ts_sim_load)((p), (order)))
#define atomic_store_explicit(p, v, order)                                              \
    ((void)(order), _Generic((p), _Atomic uint32_t *: ts_sim_store)((p), (v)))
#define atomic_exchange_explicit(p, v, order)                                           \
    ((void)(order), _Generic((p), _Atomic uint32_t *: ts_sim_exchange)((p), (v)))
#define atomic_fetch_add_explicit(p, v, order)                                          \
    ((void)(order), _Generic((p), _Atomic uint32_t *: ts_sim_fetch_add)((p), (v)))
#define atomic_compare_exchange_strong_explicit(p, e, d, so, fo)                        \
    ((void)(so), (void)(fo),                                                            \
     _Generic((p), _Atomic uint32_t *: ts_sim_compare_exchange)((p), (e), (d)))
#define atomic_compare_exchange_weak_explicit atomic_compare_exchange_strong_explicit
#define atomic_thread_fence(order) ts_sim_fence(order)

/* The out-of-line halves of wait.h, and the algorithm objects. */
#define ts_wait_slow ts_sim_wait_slow
#define ts_futex_wait ts_sim_futex_wait
#define ts_futex_wake ts_sim_futex_wake
#define TS_ALGO(stem) ts_sim_algo_##stem

#endif
