/*
 * Private: what "auto" resolves to (docs/guide/algorithms.md, "auto"), in this order:
 *   1. the tuning file of this machine, when it has an entry for the case
 *      (participant count, threads or processes, oversubscribed or not,
 *      placement): the fastest candidate measured there;
 *   2. the machine model (docs/model.md), when every participant is bound
 *      to a core of its own and nobody is oversubscribed, on the tuning
 *      file's measured core-to-core table when it has one, else on the
 *      per-level defaults: the candidate whose predicted latency is within
 *      10 % of the best at every memory-level parallelism the cores may
 *      have (auto.c, MODEL_MARGIN); when none is, the model's choice
 *      depends on what it does not know, and the rules decide;
 *   3. the rules: topo with groups below TOP, the central counter when
 *      oversubscribed, dissemination otherwise.
 * TOPSYNC_AUTO lists the steps allowed (default tuning,model,rules; the
 * rules always remain as the last resort).
 */
#ifndef TOPSYNC_SRC_TUNE_AUTO_H
#define TOPSYNC_SRC_TUNE_AUTO_H

#include <stdbool.h>

#include <topsync/groups.h>
#include <topsync/model.h>
#include <topsync/tune.h>

#include "barrier/barrier_private.h" /* struct ts_auto_request, ts_auto_choice */

void ts_auto_choose(const struct ts_auto_request *request, struct ts_auto_choice *choice);

/* Whether TOPSYNC_AUTO lets the tuning file decide. */
bool ts_auto_allows_tuning(void);

/* The collectives entry of this machine's tuning file for the case (its
 * path in path), as topsync_tuning_lookup_coll; false when there is no
 * file or no such entry (a refused file is said once on stderr). */
bool ts_auto_tuning_coll(const topsync_topology_t *topology, unsigned n, int oversubscribed,
                         const char *placement, const char *mpi, topsync_tuning_coll_entry_t *out,
                         char *path, size_t len);

/* TOPSYNC_AUTO: 0, or -EINVAL naming the valid steps. */
int ts_auto_steps_check(void);

/* The two above, as the barrier's core calls them (ts_barrier_set_chooser:
 * auto.c registers them when the library is loaded). */
extern const struct ts_barrier_chooser ts_auto_chooser;

#endif
