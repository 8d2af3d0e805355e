/*
 * The entry point all algorithms share: the wait, its timeout and cancel
 * reports, and the handle's accessors. docs/design.md section 3.
 */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <unistd.h>

#include <topsync/barrier.h>

#include "barrier/barrier_private.h"
#include "barrier/reactive.h"
#include "barrier/reactive_enter.h"
#include "barrier/setup.h"
#include "base/error.h"
#include "base/keywords.h"
#include "topology/topology_private.h"

int ts_barrier_dead_handle(const char *fn, const topsync_barrier_t *b)
{
    if (!b)
        return ts_fail(EINVAL, "%s: barrier is NULL", fn);
    return ts_fail(EINVAL, "%s: barrier %p was destroyed (or is not a topsync barrier)", fn,
                   (const void *)b);
}

/* the learned limits take words 1 to 3 of a rank's line 0 (wait.h) */
static_assert(TS_MIN_LINE >= 4 * sizeof(ts_word), "line 0 holds the learned limits");

static inline uint32_t enter_episode(topsync_barrier_t *b, unsigned rank)
{
    ts_word *local = ts_rank_line(b, rank, 0);
    ts_barrier_wait_as(b, rank);
    /* relaxed: line 0 is written by its owner only; others read it only to
     * report who is missing after a timeout (topsync_barrier_missing) */
    uint32_t episode = atomic_load_explicit(&local->value, memory_order_relaxed) + 1;
    atomic_store_explicit(&local->value, episode, memory_order_relaxed);
    return episode;
}

int topsync_barrier_missing(const topsync_barrier_t *b, unsigned rank, unsigned *out, unsigned max)
{
    if (!b || rank >= b->n || (max && !out))
        return ts_fail(EINVAL, "topsync_barrier_missing: bad argument");
    /* relaxed: a report, racy by nature (see barrier.h) */
    uint32_t episode = atomic_load_explicit(&ts_rank_line(b, rank, 0)->value, memory_order_relaxed);
    unsigned count = 0;
    for (unsigned r = 0; r < b->n; r++) {
        uint32_t v = atomic_load_explicit(&ts_rank_line(b, r, 0)->value, memory_order_relaxed);
        if ((int32_t)(v - episode) < 0) {
            if (count < max)
                out[count] = r;
            count++;
        }
    }
    return (int)count;
}

/* The -ETIMEDOUT message: who has not arrived (config: the configuration
 * the episode ran on, reactive.h; b itself otherwise). */
static int report_timeout(topsync_barrier_t *b, const topsync_barrier_t *config, unsigned rank)
{
    unsigned shown[16];
    int missing = topsync_barrier_missing(b, rank, shown, 16);
    uint32_t episode = atomic_load_explicit(&ts_rank_line(b, rank, 0)->value, memory_order_relaxed);
    const char *source = b->timeout_from_env ? "TOPSYNC_TIMEOUT" : "options.timeout_seconds";
    if (missing > 0 && b->ranks_by_arrival) /* a rank drawn by arrival names no thread */
        return ts_fail(ETIMEDOUT,
                       "a barrier wait lasted more than %g s (%s) in episode %u: "
                       "%d of %u threads %s not arrived",
                       b->timeout_seconds, source, episode, missing, b->n,
                       missing == 1 ? "has" : "have");
    char list[256] = "";
    size_t len = 0;
    for (int i = 0; i < missing && i < 16; i++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%u", i ? ", " : "", shown[i]);
    if (missing > 16)
        snprintf(list + len, sizeof list - len, ", ... (%d in all)", missing);
    if (missing <= 0) {
        /* Everybody entered this episode, yet my release never came: the
         * participant that releases me arrived and then stopped (killed?) */
        int from = config->algo->releaser ? config->algo->releaser(config, rank) : -1;
        if (from >= 0)
            snprintf(list, sizeof list,
                     "none; all arrived, but participant %d, which "
                     "releases participant %u, did not release it "
                     "(stopped or killed after arriving?)",
                     from, rank);
        else
            snprintf(list, sizeof list,
                     "none; all arrived, but the release did not reach "
                     "participant %u (one of them stopped or was killed "
                     "after arriving?)",
                     rank);
    }
    return ts_fail(ETIMEDOUT,
                   "topsync_barrier_wait: participant %u waited more than %g s "
                   "(%s) in episode %u; participant(s) not arrived: %s",
                   rank, b->timeout_seconds, source, episode, list);
}

/* The -ECANCELED message: the idle hook gave up. */
static int report_cancel(topsync_barrier_t *b, unsigned rank)
{
    unsigned shown[1];
    int missing = topsync_barrier_missing(b, rank, shown, 1);
    return ts_fail(ECANCELED,
                   "topsync_barrier_wait: participant %u abandoned its wait (the idle "
                   "hook asked to), %d participant(s) not arrived",
                   rank, missing > 0 ? missing : 0);
}

/* The algorithm's wait on `config` (b, or the configuration a reactive b
 * runs this episode on), with ts_wait_slow's timeout or idle hook unwinding
 * to here. */
static int wait_with_timeout(topsync_barrier_t *b, topsync_barrier_t *config, unsigned rank,
                             uint32_t episode)
{
    /* relaxed: a report for later waits on this handle, no data behind it */
    int broken_by = atomic_load_explicit(&b->broken_by, memory_order_relaxed);
    if (broken_by)
        return ts_fail(EPIPE, "topsync_barrier_wait: the barrier is broken (%s); destroy it",
                       broken_by == TS_UNWIND_IDLE
                           ? "an earlier wait was abandoned by its idle hook"
                           : "an earlier wait timed out");
    jmp_buf env;
    jmp_buf *outer = ts_timeout_target;
    int why = setjmp(env);
    if (why) {
        ts_timeout_target = outer;
        /* relaxed: as above; the first wait to break it names why */
        int none = 0;
        atomic_compare_exchange_strong_explicit(&b->broken_by, &none, why, memory_order_relaxed,
                                                memory_order_relaxed);
        return why == TS_UNWIND_IDLE ? report_cancel(b, rank) : report_timeout(b, config, rank);
    }
    ts_timeout_target = &env;
    config->algo->wait(config, rank, episode);
    ts_timeout_target = outer;
    return 0;
}

void topsync_barrier_wait(topsync_barrier_t *b, unsigned rank)
{
    if (__builtin_expect(!ts_barrier_handle_live(b) || rank >= b->n, 0)) {
        if (!ts_barrier_handle_live(b))
            ts_barrier_dead_handle("topsync_barrier_wait", b);
        else
            ts_fail(EINVAL, "topsync_barrier_wait: rank %u out of range (%u participants)", rank,
                    b->n);
        fprintf(stderr, "topsync: %s\n", topsync_error_message());
        abort();
    }
    uint32_t episode = enter_episode(b, rank);
    topsync_barrier_t *config = b;
    if (b->reactive)
        config = ts_reactive_enter(b, rank, episode, &episode);
    if (__builtin_expect(b->armed, 0)) {
        if (wait_with_timeout(b, config, rank, episode) < 0) {
            fprintf(stderr, "topsync: %s\n", topsync_error_message());
            abort();
        }
        return;
    }
    config->algo->wait(config, rank, episode);
}

int topsync_barrier_wait_checked(topsync_barrier_t *b, unsigned rank)
{
    if (!ts_barrier_handle_live(b))
        return ts_barrier_dead_handle("topsync_barrier_wait", b);
    if (rank >= b->n)
        return ts_fail(EINVAL, "topsync_barrier_wait: rank %u out of range (%u participants)", rank,
                       b->n);
    uint32_t episode = enter_episode(b, rank);
    topsync_barrier_t *config = b;
    if (b->reactive)
        config = ts_reactive_enter(b, rank, episode, &episode);
    if (b->armed)
        return wait_with_timeout(b, config, rank, episode);
    config->algo->wait(config, rank, episode);
    return 0;
}

const char *topsync_barrier_algorithm(const topsync_barrier_t *b)
{
    return b ? b->name : "";
}

const char *topsync_barrier_explain(const topsync_barrier_t *b)
{
    return b ? b->explain : "";
}

uint64_t topsync_barrier_switches(const topsync_barrier_t *b)
{
    /* relaxed: counts, racy by nature (barrier.h) */
    return b && b->reactive
               ? atomic_load_explicit(&b->reactive->shared->switches, memory_order_relaxed)
               : 0;
}

unsigned topsync_barrier_nparticipants(const topsync_barrier_t *b)
{
    return b ? b->n : 0;
}

const topsync_groups_t *topsync_barrier_groups(const topsync_barrier_t *b)
{
    return b ? b->groups : NULL;
}
