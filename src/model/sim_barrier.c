/*
 * Simulating a barrier: the real barrier object (barrier.c) built over the
 * simulator's copies of the algorithms (sim_atomic.h), n participants run
 * by the engine (sim_engine.c) through warm-up and timed episodes, and the
 * barrier's invariant checked in every episode.
 *
 * Invariant: nobody leaves episode e before every participant entered it.
 * Each participant records its entry (the virtual instant it calls
 * topsync_barrier_wait) and its exit; an exit finds every entry of its
 * episode already recorded, none later in virtual time, or the simulation
 * stops with -EPROTO naming the two participants. Events are performed in
 * virtual-time order and an arrival is published only after its entry was
 * recorded, so a correct barrier can never trip the check, and a barrier
 * that lets somebody out early trips it in the episode where it happens.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <topsync/model.h>

#include "barrier/barrier_private.h"
#include "base/error.h"
#include "model/model_private.h"
#include "model/sim_engine.h"

/* The simulator's copies of the algorithms (sim_atomic.h renames them),
 * in the order of ts_algorithms: both come from algorithms/list.h. */
#define SIM_DECLARE(stem, name) extern const ts_algorithm ts_sim_algo_##stem;
TS_ALGORITHM_LIST(SIM_DECLARE)
#undef SIM_DECLARE
#define SIM_ADDRESS(stem, name) &ts_sim_algo_##stem,
static const ts_algorithm *const sim_algorithms[TS_NALGORITHMS] = {TS_ALGORITHM_LIST(SIM_ADDRESS)};
#undef SIM_ADDRESS

#define SIM_MAX_PARTICIPANTS 8192u
#define SIM_MAX_EPISODES 10000000u

void topsync_sim_options_init(topsync_sim_options_t *o)
{
    if (o)
        memset(o, 0, sizeof *o);
}

/* Entries of the episodes in flight: at most two differ at any time in a
 * correct run, and the first violation stops it. */
struct episode_slot {
    uint64_t episode;
    unsigned entered;
    ts_ps last_entry;
    unsigned last_rank;
};

struct run {
    topsync_barrier_t *b;
    unsigned n;
    uint64_t warmup, total;
    ts_ps *first, *last; /* entry of the first timed episode, exit of the last */
    uint64_t *entered;   /* last episode each participant entered */
    uint64_t *left;      /* last episode each participant left */
    struct episode_slot slots[4];
    char violation[256];
};

static unsigned first_touch(size_t index, void *arg)
{
    const struct run *r = arg;
    size_t block = index * r->b->line / r->b->block_bytes;
    return block == 0 ? 0 : (unsigned)(block - 1); /* global block: rank 0 */
}

static void enter(struct run *r, unsigned rank, uint64_t e)
{
    struct episode_slot *s = &r->slots[e & 3];
    if (s->episode != e)
        *s = (struct episode_slot){.episode = e};
    s->entered++;
    ts_ps now = ts_sim_now();
    if (now >= s->last_entry) {
        s->last_entry = now;
        s->last_rank = rank;
    }
    r->entered[rank] = e;
}

static void leave(struct run *r, unsigned rank, uint64_t e)
{
    const struct episode_slot *s = &r->slots[e & 3];
    ts_ps now = ts_sim_now();
    if (s->episode == e && s->entered == r->n && s->last_entry <= now) {
        r->left[rank] = e;
        return;
    }
    if (s->episode == e && s->entered == r->n) {
        snprintf(r->violation, sizeof r->violation,
                 "participant %u left episode %llu at %.1f ns, before participant %u entered "
                 "it (at %.1f ns)",
                 rank, (unsigned long long)e, (double)now / 1000, s->last_rank,
                 (double)s->last_entry / 1000);
    } else {
        unsigned missing = 0;
        while (missing < r->n && r->entered[missing] >= e)
            missing++;
        snprintf(r->violation, sizeof r->violation,
                 "participant %u left episode %llu at %.1f ns while participant %u had not "
                 "entered it",
                 rank, (unsigned long long)e, (double)now / 1000, missing);
    }
    ts_sim_stop();
}

static void body(unsigned rank, void *arg)
{
    struct run *r = arg;
    for (uint64_t e = 1; e <= r->total; e++) {
        if (e == r->warmup + 1)
            r->first[rank] = ts_sim_now();
        enter(r, rank, e);
        topsync_barrier_wait(r->b, rank);
        leave(r, rank, e);
    }
    r->last[rank] = ts_sim_now();
}

/* "0, 1, 5, ... (N in all)" of the ranks for which pick() holds. */
static void rank_list(const struct run *r, int (*pick)(const struct run *, unsigned), char *buf,
                      size_t len)
{
    unsigned count = 0;
    size_t used = 0;
    buf[0] = '\0';
    for (unsigned q = 0; q < r->n; q++) {
        if (!pick(r, q))
            continue;
        if (count++ < 16 && used < len)
            used += (size_t)snprintf(buf + used, len - used, "%s%u", count > 1 ? ", " : "", q);
    }
    if (count > 16 && used < len)
        snprintf(buf + used, len - used, ", ... (%u in all)", count);
    if (!count)
        snprintf(buf, len, "none");
}

static int unfinished(const struct run *r, unsigned q)
{
    return r->left[q] < r->total;
}

static int deadlock_report(const struct run *r, const char *resolved)
{
    uint64_t stuck = r->total;
    for (unsigned q = 0; q < r->n; q++)
        if (unfinished(r, q) && r->entered[q] < stuck)
            stuck = r->entered[q];
    char waiting[160];
    rank_list(r, unfinished, waiting, sizeof waiting);
    return ts_fail(EDEADLK,
                   "simulated %s hangs: in episode %llu every participant still "
                   "running waits for a word nobody will write (waiting: %s)",
                   resolved, (unsigned long long)stuck, waiting);
}

static int check_table(void)
{
    for (size_t i = 0; i < TS_NALGORITHMS; i++)
        if (strcmp(sim_algorithms[i]->name, ts_algorithms[i]->name) != 0)
            return ts_fail(EINVAL, "simulator: algorithm table out of order at %zu (%s, %s)", i,
                           sim_algorithms[i]->name, ts_algorithms[i]->name);
    return 0;
}

static int check_options(const topsync_model_t *m, unsigned n, const hwloc_const_bitmap_t *sets,
                         const topsync_sim_options_t *o, unsigned *pu)
{
    if (n == 0 || n > SIM_MAX_PARTICIPANTS)
        return ts_fail(EINVAL, "simulation: %u participants; valid: 1 to %u", n,
                       SIM_MAX_PARTICIPANTS);
    if (o->episodes > SIM_MAX_EPISODES || o->warmup > SIM_MAX_EPISODES)
        return ts_fail(EINVAL,
                       "simulation: %u episodes and %u warm-up ones; valid: up to %u "
                       "each",
                       o->episodes, o->warmup, SIM_MAX_EPISODES);
    if ((unsigned)o->fault > TOPSYNC_SIM_FAULT_SKIP_WAIT)
        return ts_fail(EINVAL,
                       "simulation: fault %d unknown; valid: none, skip-arrival, "
                       "skip-wait",
                       (int)o->fault);
    if (o->mlp > TOPSYNC_MODEL_MAX_MLP)
        return ts_fail(EINVAL,
                       "simulation: memory-level parallelism %u; valid: 0 (the "
                       "model's) or 1 to %u outstanding misses",
                       o->mlp, TOPSYNC_MODEL_MAX_MLP);
    if (o->fault != TOPSYNC_SIM_FAULT_NONE && o->fault_rank >= n)
        return ts_fail(EINVAL, "simulation: fault on participant %u of %u", o->fault_rank, n);
    hwloc_bitmap_t used = hwloc_bitmap_alloc();
    if (!used)
        return ts_fail(ENOMEM, "out of memory");
    int rc = 0;
    for (unsigned i = 0; i < n && rc == 0; i++) {
        int first = sets[i] ? hwloc_bitmap_first(sets[i]) : -1;
        if (first < 0 || !ts_model_has_pu(m, (unsigned)first))
            rc = ts_fail(EINVAL,
                         "simulation: participant %u is bound to no PU of the model's "
                         "topology",
                         i);
        else if (hwloc_bitmap_isset(used, (unsigned)first))
            rc = ts_fail(EINVAL,
                         "simulation: participants share PU %d (%u participants on the "
                         "topology's PUs); the model has no scheduler, so give each "
                         "its own PU",
                         first, n);
        else {
            hwloc_bitmap_set(used, (unsigned)first);
            pu[i] = (unsigned)first;
        }
    }
    hwloc_bitmap_free(used);
    return rc;
}

int topsync_sim_barrier(const topsync_model_t *m, unsigned n, const hwloc_const_bitmap_t *sets,
                        const char *algorithm, const topsync_sim_options_t *opts,
                        topsync_sim_result_t *res)
{
    topsync_sim_options_t defaults;
    if (!m || !sets || !res)
        return ts_fail(EINVAL, "topsync_sim_barrier: model, cpusets and result are required");
    memset(res, 0, sizeof *res);
    if (!opts) {
        topsync_sim_options_init(&defaults);
        opts = &defaults;
    }
    int rc = check_table();
    if (rc < 0)
        return rc;
    unsigned *pu = calloc(n ? n : 1, sizeof *pu);
    if (!pu)
        return ts_fail(ENOMEM, "out of memory");
    rc = check_options(m, n, sets, opts, pu);
    if (rc < 0) {
        free(pu);
        return rc;
    }

    topsync_barrier_options_t bo;
    topsync_barrier_options_init(&bo);
    bo.algorithm = algorithm ? algorithm : "auto";
    bo.wait = opts->wait == TOPSYNC_WAIT_DEFAULT ? TOPSYNC_WAIT_SPIN : opts->wait;
    bo.topology = m->topology;
    bo.cpusets = sets;
    bo.line_size = opts->line_size ? opts->line_size : topsync_topology_line_size(m->topology);
    bo.timeout_seconds = -1; /* virtual time: no clock may cut a wait short */
    struct run r = {.n = n};
    rc = ts_barrier_create_with(&r.b, n, &bo, sim_algorithms, m);
    if (rc < 0) {
        free(pu);
        return rc;
    }
    uint64_t episodes = opts->episodes ? opts->episodes : 1000;
    r.warmup = opts->warmup ? opts->warmup : (episodes / 10 ? episodes / 10 : 1);
    r.total = r.warmup + episodes;
    r.first = calloc(n, sizeof *r.first);
    r.last = calloc(n, sizeof *r.last);
    r.entered = calloc(n, sizeof *r.entered);
    r.left = calloc(n, sizeof *r.left);
    snprintf(res->resolved, sizeof res->resolved, "%s", topsync_barrier_algorithm(r.b));
    snprintf(res->wait, sizeof res->wait, "%s", topsync_barrier_wait_policy_name(r.b));
    if (!r.first || !r.last || !r.entered || !r.left) {
        rc = ts_fail(ENOMEM, "out of memory");
        goto out;
    }
    struct ts_sim_config cfg = {
        .model = m,
        .n = n,
        .pu = pu,
        .base = r.b->base,
        .size = r.b->size,
        .line = r.b->line,
        .first_touch = first_touch,
        .seed = opts->seed,
        .fault = opts->fault,
        .fault_rank = opts->fault_rank,
        .body = body,
        .arg = &r,
        .mlp = opts->mlp ? opts->mlp
               : m->mlp  ? m->mlp
                         : 1,
    };
    res->mlp = cfg.mlp;
    struct ts_sim_stats stats;
    rc = ts_sim_run(&cfg, &stats);
    if (rc < 0)
        goto out;
    res->events = stats.events;
    if (stats.outcome == TS_SIM_STOPPED) {
        rc = ts_fail(EPROTO, "simulated %s broke the barrier invariant: %s", res->resolved,
                     r.violation);
        goto out;
    }
    if (stats.outcome == TS_SIM_DEADLOCK) {
        rc = deadlock_report(&r, res->resolved);
        goto out;
    }
    ts_ps slowest = 0, fastest = INT64_MAX;
    for (unsigned q = 0; q < n; q++) {
        ts_ps span = r.last[q] - r.first[q];
        if (span > slowest)
            slowest = span;
        if (span < fastest)
            fastest = span;
    }
    res->episodes = episodes;
    res->latency_ns = (double)slowest / 1000.0 / (double)episodes;
    res->fastest_ns = (double)fastest / 1000.0 / (double)episodes;
out:
    topsync_barrier_destroy(r.b);
    free(r.first);
    free(r.last);
    free(r.entered);
    free(r.left);
    free(pu);
    return rc;
}
