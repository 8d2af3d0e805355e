/*
 * Private: the events of the simulated atomics, as the engine implements
 * them (sim_engine.c) and the simulator's copies of the algorithms call
 * them (through the macros of sim_atomic.h).
 */
#ifndef TOPSYNC_SRC_MODEL_SIM_EVENTS_H
#define TOPSYNC_SRC_MODEL_SIM_EVENTS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct ts_word;
struct ts_wait;

/* A relaxed load may overlap with later ones (memory-level parallelism);
 * any stronger order waits for its own line before the participant goes on. */
uint32_t ts_sim_load(_Atomic uint32_t *word, memory_order order);
void ts_sim_store(_Atomic uint32_t *word, uint32_t value);
uint32_t ts_sim_exchange(_Atomic uint32_t *word, uint32_t value);
uint32_t ts_sim_fetch_add(_Atomic uint32_t *word, uint32_t add);
bool ts_sim_compare_exchange(_Atomic uint32_t *word, uint32_t *expected, uint32_t desired);
/* Any fence waits for the participant's outstanding misses. */
void ts_sim_fence(memory_order order);

/* The simulated halves of wait.c: parking on a line instead of spinning,
 * and the futex calls, which never happen (nobody sleeps in the model). */
void ts_sim_wait_slow(struct ts_word *w, uint32_t episode, const struct ts_wait *policy);
void ts_sim_futex_wait(_Atomic uint32_t *addr, uint32_t expected, bool process_shared,
                       uint64_t timeout_ns);
void ts_sim_futex_wake(_Atomic uint32_t *addr, bool process_shared);

#endif
