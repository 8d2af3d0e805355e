/*
 * Private: the simulated-atomics layer. CMake compiles every algorithm file
 * (src/barrier/algorithms/NAME.c) twice: once as it is, for the library, and once with
 * this header forced in front of it (-include), for the simulator. The
 * second copy is the same code: only the atomic operations on 32-bit words
 * and the out-of-line halves of the wait change meaning.
 * The why: docs/design.md section 8.14.
 */
#ifndef TOPSYNC_SRC_MODEL_SIM_ATOMIC_H
#define TOPSYNC_SRC_MODEL_SIM_ATOMIC_H

#include "model/sim_events.h"

/* wait.h: the code as it runs on hardware, not ThreadSanitizer's variant */
#define TS_SIMULATED_COPY 1

#undef atomic_load_explicit
#undef atomic_store_explicit
#undef atomic_exchange_explicit
#undef atomic_fetch_add_explicit
#undef atomic_compare_exchange_strong_explicit
#undef atomic_compare_exchange_weak_explicit
#undef atomic_thread_fence

#define atomic_load_explicit(p, order) \
    (_Generic((p), _Atomic uint32_t * : ts_sim_load)((p), (order)))
#define atomic_store_explicit(p, v, order) \
    ((void)(order), _Generic((p), _Atomic uint32_t * : ts_sim_store)((p), (v)))
#define atomic_exchange_explicit(p, v, order) \
    ((void)(order), _Generic((p), _Atomic uint32_t * : ts_sim_exchange)((p), (v)))
#define atomic_fetch_add_explicit(p, v, order) \
    ((void)(order), _Generic((p), _Atomic uint32_t * : ts_sim_fetch_add)((p), (v)))
#define atomic_compare_exchange_strong_explicit(p, e, d, so, fo) \
    ((void)(so), (void)(fo),                                                            \
     _Generic((p), _Atomic uint32_t *: ts_sim_compare_exchange)((p), (e), (d)))
#define atomic_compare_exchange_weak_explicit atomic_compare_exchange_strong_explicit
#define atomic_thread_fence(order) ts_sim_fence(order)

/* The out-of-line halves of wait.h, the algorithm objects, and what an
 * algorithm file exports besides (the simulator's barriers never carry
 * data, but the second copy of topo.c needs a name of its own). */
#define ts_wait_slow ts_sim_wait_slow
#define ts_futex_wait ts_sim_futex_wait
#define ts_futex_wake ts_sim_futex_wake
#define TS_ALGO(stem) ts_sim_algo_##stem
#define ts_topo_combine_all ts_sim_topo_combine_all

#endif
