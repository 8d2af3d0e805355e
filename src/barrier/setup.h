/*
 * Private: what the barrier core's files share (names.c, settings.c,
 * lifecycle.c, barrier.c). docs/design.md section 3.
 */
#ifndef TOPSYNC_SRC_BARRIER_SETUP_H
#define TOPSYNC_SRC_BARRIER_SETUP_H

#include <stdbool.h>
#include <stddef.h>

#include <topsync/barrier.h>

#include "barrier/barrier_private.h"

#define NALGORITHMS TS_NALGORITHMS

/* names.c: an algorithm name parsed (auto: algo NULL). */
struct parsed_algorithm {
    const ts_algorithm *algo; /* NULL for auto */
    unsigned level_mask;
    bool tree_release;
    bool mode_given;
};
/* 0, or -EINVAL with a message that begins with `origin` and lists the
 * valid names. */
int ts_barrier_parse_algorithm(const char *name, struct parsed_algorithm *out, const char *origin);
/* "l2,numa"-style list of the levels in mask ("flat" for none). */
void ts_barrier_level_list(unsigned mask, char *buf, size_t len);

/* settings.c: the options and variables, resolved for one barrier. */
struct resolved {
    struct parsed_algorithm alg;
    topsync_wait_policy_t wait;
    bool wait_given; /* by the options or TOPSYNC_WAIT: auto keeps it */
    bool oversubscribed;
    bool disjoint_cpus; /* every participant bound, no CPU shared by two of them */
    bool fits_cpus;     /* the participants alone would not oversubscribe their CPUs */
    bool given_by_env;  /* the algorithm came from TOPSYNC_BARRIER */
    unsigned participants;
};
int ts_barrier_resolve(unsigned n, const topsync_barrier_options_t *o, struct resolved *r);
void ts_barrier_wait_settings(ts_wait *w, const struct resolved *r, bool process_shared,
                              long spin_override);
/* TOPSYNC_SPIN (-1 unset), TOPSYNC_POLL, TOPSYNC_TIMEOUT (0 unset). */
int ts_barrier_spin_from_env(long *out);
int ts_barrier_poll_from_env(bool *ordered);
int ts_barrier_timeout_from_env(double *out);
/* The largest cache line of this machine (hwloc), probed once. */
size_t ts_barrier_machine_line_size(void);
/* The machine's online CPUs, which the kernel's time slice grows with. */
unsigned ts_barrier_machine_online_cpus(void);
/* Fixes the online CPUs this thread's barriers are set up for (0: back to
 * the machine's) and returns what they were fixed at before (0: nothing).
 * For the simulator (model/sim_barrier.c): the slice that bounds a
 * learned spin is the simulated machine's. */
unsigned ts_barrier_machine_online_cpus_fix(unsigned cpus);
/* Resolve "auto" (src/select/auto.c) into r, and say how in b->explain. */
void ts_barrier_choose_auto(topsync_barrier_t *b, const topsync_barrier_options_t *opts,
                            const topsync_groups_t *groups, const topsync_model_t *model,
                            struct resolved *r);

/* lifecycle.c: a handle that create or attach returned and destroy has not
 * taken: the wait path's check (it reads the handle; a destroyed one stays
 * readable in the quarantine). */
static inline bool ts_barrier_handle_live(const topsync_barrier_t *b)
{
    return b && b->magic == TS_BARRIER_LIVE;
}
/* barrier.c: -EINVAL with the message for a NULL, destroyed or foreign handle. */
int ts_barrier_dead_handle(const char *fn, const topsync_barrier_t *b);

#endif
