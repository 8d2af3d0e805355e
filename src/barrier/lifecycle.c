/*
 * A barrier's life: the segment's layout, create and attach (first touch
 * by its owner), destroy and the quarantine of destroyed handles.
 * docs/design.md section 3.
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
#include "barrier/setup.h"
#include "base/env.h"
#include "base/error.h"
#include "base/hash.h"
#include "base/keywords.h"
#include "topology/topology_private.h"

topsync_groups_t *ts_groups_clone(const topsync_groups_t *g);

/* ---------------------------------------------------------------------- */
/* Construction.                                                            */

/* The groups topo runs on: given ready-made, built from the bindings over
 * the levels of `mask`, or one flat group. */
static int build_groups(const topsync_barrier_options_t *opts, unsigned n, unsigned mask,
                        topsync_groups_t **groups)
{
    if (opts->groups) {
        *groups = ts_groups_clone(opts->groups);
        return *groups ? 0 : ts_fail(ENOMEM, "out of memory");
    }
    if (opts->topology && opts->cpusets)
        return topsync_groups_build(groups, opts->topology, n, opts->cpusets, mask);
    return topsync_groups_build_flat(groups, n);
}

/* The entry of `table` that stands where `algo` stands in ts_algorithms. */
static const ts_algorithm *from_table(const ts_algorithm *algo, const ts_algorithm *const *table)
{
    for (size_t i = 0; i < NALGORITHMS; i++)
        if (ts_algorithms[i] == algo)
            return table[i];
    return algo;
}

static int prepare(topsync_barrier_t **out, unsigned n, const topsync_barrier_options_t *opts,
                   const ts_algorithm *const *table, const topsync_model_t *model, bool attached,
                   topsync_barrier_t **bp)
{
    topsync_barrier_options_t defaults;
    if (!out)
        return ts_fail(EINVAL, "barrier: out is NULL");
    *out = NULL;
    if (n == 0)
        return ts_fail(EINVAL, "barrier: no participants (n = 0)");
    if (n > TOPSYNC_BARRIER_MAX_PARTICIPANTS)
        return ts_fail(EINVAL,
                       "barrier: %u participants; the limit is %u "
                       "(TOPSYNC_BARRIER_MAX_PARTICIPANTS)",
                       n, TOPSYNC_BARRIER_MAX_PARTICIPANTS);
    if (!opts) {
        topsync_barrier_options_init(&defaults);
        opts = &defaults;
    }
    struct resolved r;
    int rc = ts_barrier_resolve(n, opts, &r);
    if (rc < 0)
        return rc;
    if (opts->cpusets && !opts->topology)
        return ts_fail(EINVAL, "barrier: cpusets given without their topology");
    if (opts->groups && topsync_groups_nparticipants(opts->groups) != n)
        return ts_fail(EINVAL, "barrier: groups are for %u participants, barrier for %u",
                       topsync_groups_nparticipants(opts->groups), n);
    size_t line = opts->line_size ? opts->line_size : ts_barrier_machine_line_size();
    if (line & (line - 1))
        return ts_fail(EINVAL, "barrier: line size %zu is not a power of two (valid: %d to %d)",
                       line, TS_MIN_LINE, TS_MAX_LINE);
    if (line < TS_MIN_LINE || line > TS_MAX_LINE)
        return ts_fail(EINVAL, "barrier: line size %zu is not in [%d, %d]", line, TS_MIN_LINE,
                       TS_MAX_LINE);

    long spin;
    rc = ts_barrier_spin_from_env(&spin);
    if (rc < 0)
        return rc;
    bool ordered_poll;
    rc = ts_barrier_poll_from_env(&ordered_poll);
    if (rc < 0)
        return rc;
    double timeout = opts->timeout_seconds;
    bool timeout_by_env = timeout == 0;
    if (timeout != timeout || timeout > 1e6)
        return ts_fail(EINVAL,
                       "barrier: timeout_seconds %g is not valid; valid: up to 1000000, "
                       "0 for $TOPSYNC_TIMEOUT, negative for none",
                       timeout);
    if (timeout == 0) {
        rc = ts_barrier_timeout_from_env(&timeout);
        if (rc < 0)
            return rc;
    }
    if (timeout < 0)
        timeout = 0;
    double idle_interval = opts->idle_interval_seconds;
    if (idle_interval != idle_interval || idle_interval < 0 || idle_interval > 1e6)
        return ts_fail(EINVAL,
                       "barrier: idle_interval_seconds %g is not valid; valid: 0 "
                       "(0.1 s) to 1000000",
                       idle_interval);
    if (idle_interval == 0)
        idle_interval = 0.1;

    topsync_barrier_t *b = calloc(1, sizeof *b);
    if (!b)
        return ts_fail(ENOMEM, "out of memory");
    b->magic = TS_BARRIER_LIVE;
    b->n = n;
    b->line = line;
    b->attached = attached;

    /* Groups: needed by topo, and by auto to decide (over every level;
     * rebuilt below when auto picks topo on fewer). */
    topsync_groups_t *groups = NULL;
    rc = build_groups(opts, n, r.alg.level_mask, &groups);
    if (rc < 0) {
        free(b);
        return rc;
    }
    if (!r.alg.algo) {
        b->by_auto = true;
        ts_barrier_choose_auto(b, opts, groups, model, &r);
        if (r.alg.algo == &ts_algo_topo && r.alg.level_mask != TOPSYNC_LEVELS_ALL &&
            !opts->groups) {
            topsync_groups_destroy(groups);
            groups = NULL;
            if ((rc = build_groups(opts, n, r.alg.level_mask, &groups)) < 0) {
                free(b);
                return rc;
            }
        }
    } else {
        snprintf(b->explain, sizeof b->explain, "given: %s",
                 r.given_by_env ? "TOPSYNC_BARRIER" : "options.algorithm");
    }
    b->wait_given = r.wait_given;
    b->level_mask = r.alg.level_mask;
    b->tree_release = r.alg.tree_release;
    ts_barrier_wait_settings(&b->wait, &r, opts->process_shared != 0, spin);
    b->wait.ordered_poll = ordered_poll;
    b->timeout_seconds = timeout;
    b->timeout_from_env = timeout_by_env;
    b->wait.timeout_ns = timeout > 0 ? (uint64_t)(timeout * 1e9) + 1 : 0;
    b->wait.idle = opts->idle;
    b->wait.idle_arg = opts->idle_arg;
    b->wait.idle_ns = opts->idle ? (uint64_t)(idle_interval * 1e9) + 1 : 0;
    b->armed = b->wait.timeout_ns || b->wait.idle;
    b->algo = r.alg.algo;
    if (b->algo == &ts_algo_topo) {
        b->groups = groups;
        topsync_level_t lv[TOPSYNC_MAX_LEVELS];
        unsigned nl = topsync_groups_levels(groups, lv), mask = 0;
        for (unsigned i = 0; i < nl; i++)
            mask |= lv[i];
        char levels[64];
        if (topsync_groups_hierarchical(groups))
            ts_barrier_level_list(mask, levels, sizeof levels); /* "flat": no level shared */
        else
            snprintf(levels, sizeof levels, "unbound"); /* hierarchy unknowable */
        snprintf(b->name, sizeof b->name, "topo:%s/%s", levels,
                 b->tree_release ? "tree" : "global");
    } else {
        topsync_groups_destroy(groups);
        snprintf(b->name, sizeof b->name, "%s", b->algo->name);
    }
    b->algo = from_table(b->algo, table);

    /* A block of a page when it is placed on its participant's NUMA node
     * (create) or first touched by its own process (attach); of its lines
     * otherwise: a thread barrier of 10^5 participants must not cost 10^5
     * pages. */
    unsigned lines = ts_algo_global_lines(b);
    if (ts_algo_rank_lines(b) > lines)
        lines = ts_algo_rank_lines(b);
    size_t granule = line;
    if (attached || opts->process_shared || (opts->topology && opts->cpusets))
        granule = (size_t)sysconf(_SC_PAGESIZE);
    b->block_bytes = ((size_t)lines * line + granule - 1) / granule * granule;
    b->size = b->block_bytes * ((size_t)n + 1);
    *bp = b;
    return 0;
}

/* Where the co-location check reads the participants' CPUs: line 0 of each
 * rank block. */
static void set_peers(topsync_barrier_t *b)
{
    b->wait.peer_base = b->base + b->block_bytes;
    b->wait.peer_stride = b->block_bytes;
    b->wait.npeers = b->n;
}

static void fill_block(topsync_barrier_t *b, int rank, uint32_t episode)
{
    unsigned lines = rank < 0 ? ts_algo_global_lines(b) : ts_algo_rank_lines(b);
    unsigned words_per_line = (unsigned)(b->line / sizeof(ts_word));
    if (words_per_line > 4)
        words_per_line = 4; /* the most any line holds (MCS) */
    /* the global line 0 is the fingerprint (see barrier_private.h) */
    for (unsigned l = rank < 0 ? 1 : 0; l < lines; l++) {
        ts_word *w = rank < 0 ? ts_global_line(b, l) : ts_rank_line(b, (unsigned)rank, l);
        for (unsigned k = 0; k < words_per_line; k++) {
            /* relaxed: published to the other participants by whatever makes
             * them start (thread creation, fork, the caller's barrier) */
            atomic_store_explicit(&w[k].value, ts_flag_initial(episode), memory_order_relaxed);
        }
    }
    if (b->algo->reset_counters)
        b->algo->reset_counters(b, rank);
}

/*
 * Private segments of small barriers are kept for the next barrier of the
 * same size instead of unmapped: a program that makes and destroys a
 * barrier per phase (pthread_barrier_init/destroy through the drop-in)
 * then pays a memset of a few pages, not an mmap, three page faults and a
 * munmap each time (issue 35 item 4: 42 us per init and destroy before).
 * Only segments placed nowhere in particular (no per-rank NUMA binding)
 * are kept, so a reused one is no worse placed than a new one.
 */
enum { SPARE_SEGMENTS = 4, SPARE_MAX_BYTES = 64 << 10 };
static struct {
    pthread_mutex_t lock;
    void *mem[SPARE_SEGMENTS];
    size_t size[SPARE_SEGMENTS];
} spare = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* A kept segment of `size` bytes, zeroed, or NULL. */
static void *spare_take(size_t size)
{
    void *mem = NULL;
    pthread_mutex_lock(&spare.lock);
    for (unsigned i = 0; i < SPARE_SEGMENTS && !mem; i++)
        if (spare.mem[i] && spare.size[i] == size) {
            mem = spare.mem[i];
            spare.mem[i] = NULL;
        }
    pthread_mutex_unlock(&spare.lock);
    if (mem)
        memset(mem, 0, size); /* as a fresh anonymous mapping reads */
    return mem;
}

/* Keep a segment for spare_take, or unmap it. */
static void spare_give(void *mem, size_t size, bool keep)
{
    pthread_mutex_lock(&spare.lock);
    for (unsigned i = 0; i < SPARE_SEGMENTS && keep && size <= SPARE_MAX_BYTES; i++)
        if (!spare.mem[i]) {
            spare.mem[i] = mem;
            spare.size[i] = size;
            mem = NULL;
            break;
        }
    pthread_mutex_unlock(&spare.lock);
    if (mem)
        munmap(mem, size);
}

static void reactive_free(topsync_barrier_t *b);

/* Free what the barrier holds (roles, mapping, groups), not the handle. */
static void release_state(topsync_barrier_t *b)
{
    reactive_free(b);
    if (b->roles) {
        if (b->algo->free_roles)
            b->algo->free_roles(b);
        else
            free(b->roles);
        b->roles = NULL;
    }
    if (b->owns_mapping && b->base)
        spare_give(b->base, b->size, b->spare_segment);
    b->base = NULL;
    topsync_groups_destroy(b->groups);
    b->groups = NULL;
}

/* The live handles: destroy asks it before it reads a handle. */
static ts_registry_t live_barriers = TS_REGISTRY_INITIALIZER;

static void free_barrier(topsync_barrier_t *b)
{
    release_state(b);
    free(b);
}

/* Which barriers may react: none (the configurations themselves, the
 * simulator's), those whose algorithm auto chose (reaction_for), or the
 * collectives' barrier, a topo variant given by them whose episodes carry
 * data (docs/design.md section 10.5). */
enum reacts { REACTS_NEVER, REACTS_IF_CHOSEN, REACTS_AS_CARRIER };

/* How a barrier reacts (reactive.h), resolved once per create or attach. */
struct reaction {
    enum ts_reactive_mode mode;
    uint32_t every;       /* every:N */
    size_t segment_bytes; /* in a segment: the plan's page, the robust part, the candidate's */
    size_t robust_bytes, candidate_bytes; /* the last two (0: no candidate) */
};
static int reaction_for(const topsync_barrier_t *b, const topsync_barrier_options_t *opts,
                        const ts_algorithm *const *table, bool in_segment, enum reacts reacts,
                        struct reaction *how);
static int make_reactive(topsync_barrier_t *b, const topsync_barrier_options_t *opts,
                         const ts_algorithm *const table[TS_NALGORITHMS],
                         const struct reaction *how, unsigned char *segment, unsigned rank);

static int create(topsync_barrier_t **out, unsigned n, const topsync_barrier_options_t *opts,
                  const ts_algorithm *const table[TS_NALGORITHMS], const topsync_model_t *model,
                  enum reacts reacts)
{
    topsync_barrier_t *b;
    int rc = prepare(out, n, opts, table, model, false, &b);
    if (rc < 0)
        return rc;
    int shared = opts && opts->process_shared;
    bool placed = opts && opts->topology && opts->cpusets &&
                  strcmp(topsync_topology_source(opts->topology), "this machine") == 0;
    b->spare_segment = !shared && !placed;
    void *mem = b->spare_segment ? spare_take(b->size) : NULL;
    if (!mem)
        mem = mmap(NULL, b->size, PROT_READ | PROT_WRITE,
                   (shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) {
        size_t size = b->size;
        free_barrier(b);
        return ts_fail(ENOMEM, "barrier: cannot map %zu bytes of shared state", size);
    }
    b->base = mem;
    b->owns_mapping = true;
    set_peers(b);

    /* Place each rank's block on its NUMA node before anything touches it
     * (best effort: synthetic topologies and 1-node machines make it moot). */
    if (placed) {
        for (unsigned r = 0; r < n; r++)
            hwloc_set_area_membind(topsync_topology_hwloc(opts->topology),
                                   b->base + (size_t)(r + 1) * b->block_bytes, b->block_bytes,
                                   opts->cpusets[r], HWLOC_MEMBIND_BIND, 0);
    }
    /* A fresh anonymous mapping reads as zeros, which is every word's
     * initial value at episode 0: then nothing is touched before use. */
    uint32_t start = (uint32_t)(opts ? opts->start_episode : 0);
    if (ts_flag_initial(start) != 0) {
        fill_block(b, -1, start);
        for (unsigned r = 0; r < n; r++)
            fill_block(b, (int)r, start);
    }

    rc = b->algo->setup ? b->algo->setup(b) : 0;
    /* the simulator's barriers model one configuration (its idle model) */
    struct reaction how;
    if (rc == 0 && reacts != REACTS_NEVER && !model && table == ts_algorithms &&
        (rc = reaction_for(b, opts, table, false, reacts, &how)) > 0)
        rc = make_reactive(b, opts, table, &how, NULL, 0);
    if (rc < 0) {
        free_barrier(b);
        return rc;
    }
    ts_registry_add(&live_barriers, &b->live);
    *out = b;
    return 0;
}

int ts_barrier_create_with(topsync_barrier_t **out, unsigned n,
                           const topsync_barrier_options_t *opts,
                           const ts_algorithm *const table[TS_NALGORITHMS],
                           const topsync_model_t *model)
{
    return create(out, n, opts, table, model, REACTS_IF_CHOSEN);
}

/* ---------------------------------------------------------------------- */
/* Reactive barriers (reactive.h): the robust configuration beside the    */
/* chosen one, and what the switch keeps.                                 */

/* The robust configuration for a busy node: one arrival counter and one
 * release word (a single futex broadcast wakes every sleeper), the wait
 * policy block unless one was given, and a spin bounded in time that never
 * grows to a scheduler slice (issue 53: that spin, and dissemination's
 * log2 P sleeps and wake-ups, lost 5-16x to glibc on a busy 16-core node). */
static void robust_options(topsync_barrier_options_t *o, const topsync_barrier_options_t *opts,
                           const topsync_barrier_t *b)
{
    if (opts)
        *o = *opts;
    else
        topsync_barrier_options_init(o);
    o->algorithm = "sense-reversing";
    if (!b->wait_given)
        o->wait = TOPSYNC_WAIT_BLOCK;
    o->line_size = b->line;
}

/* Online tuning's candidate (docs/design.md section 10.4): the algorithm
 * auto's rules set aside, with the chosen one's options. */
static void candidate_options(topsync_barrier_options_t *o, const topsync_barrier_options_t *opts,
                              const topsync_barrier_t *b)
{
    if (opts)
        *o = *opts;
    else
        topsync_barrier_options_init(o);
    o->algorithm = b->auto_candidate;
    o->line_size = b->line;
}

static void robust_spin(topsync_barrier_t *robust)
{
    ts_wait *w = &robust->wait;
    if (w->spin_unclocked) { /* the slice-long spin, and its yields when co-located */
        w->spin_unclocked = 0;
        w->yield_iterations = 0;
    }
    w->spin_learn_most = 0; /* spin_iterations is the most */
}

/* Whether b reacts under TOPSYNC_REACTIVE: 1 with *how filled (with the
 * bytes it takes after b's part of a segment when in_segment: a page for
 * the plan, then the robust configuration's part), 0, or a negative errno. */
static int reaction_for(const topsync_barrier_t *b, const topsync_barrier_options_t *opts,
                        const ts_algorithm *const *table, bool in_segment, enum reacts reacts,
                        struct reaction *how)
{
    how->segment_bytes = 0;
    int rc = ts_reactive_from_env(&how->mode, &how->every);
    if (rc < 0)
        return rc;
    if (how->mode == TS_REACTIVE_OFF || b->gathered)
        return 0;
    if (how->mode == TS_REACTIVE_ON && b->n == 1)
        return 0;
    /* The collectives' topo reacts although they gave it, with the robust
     * configuration alone: by_auto is false, so no candidate (only topo
     * and the counter's last arriver combine, section 10.5). */
    if (how->mode == TS_REACTIVE_ON && reacts != REACTS_AS_CARRIER &&
        (!b->by_auto ||
         (b->algo == from_table(&ts_algo_sense_reversing, table) && b->wait.kind == TS_WAIT_BLOCK)))
        return 0; /* a given algorithm is kept; the robust one is already chosen */
    if (!in_segment)
        return 1;
    topsync_barrier_options_t o;
    robust_options(&o, opts, b);
    topsync_barrier_t *robust, *dummy;
    if ((rc = prepare(&dummy, b->n, &o, ts_algorithms, NULL, true, &robust)) < 0)
        return rc;
    how->robust_bytes = robust->size;
    free_barrier(robust);
    how->candidate_bytes = 0;
    if (b->auto_candidate[0]) {
        candidate_options(&o, opts, b);
        topsync_barrier_t *candidate;
        if ((rc = prepare(&dummy, b->n, &o, ts_algorithms, NULL, true, &candidate)) < 0)
            return rc;
        how->candidate_bytes = candidate->size;
        free_barrier(candidate);
    }
    how->segment_bytes = (size_t)sysconf(_SC_PAGESIZE) + how->robust_bytes + how->candidate_bytes;
    return 1;
}

static int attach(topsync_barrier_t **out, unsigned n, const topsync_barrier_options_t *opts,
                  void *segment, size_t size, unsigned rank, bool check_mapping,
                  enum reacts reacts);

/* how: reaction_for's answer for b; segment: NULL for a created barrier
 * (the plan gets memory of its own), else the tail of an attached one's
 * segment (how->segment_bytes, zero-filled), which `rank` attaches to. */
static int make_reactive(topsync_barrier_t *b, const topsync_barrier_options_t *opts,
                         const ts_algorithm *const table[TS_NALGORITHMS],
                         const struct reaction *how, unsigned char *segment, unsigned rank)
{
    enum ts_reactive_mode mode = how->mode;
    uint32_t every = how->every;
    int rc;
    ts_reactive *rx = calloc(1, sizeof *rx);
    if (!rx)
        return ts_fail(ENOMEM, "out of memory");
    b->reactive = rx;
    rx->mode = mode;
    rx->nconfigs = 2;
    rx->config[0] = b;
    /* until the first window says what an episode costs, decide every 8
     * (reactive_policy.c, ts_reactive_check_mask) */
    rx->check_mask = mode == TS_REACTIVE_EVERY ? every - 1 : TS_REACTIVE_FIRST_MASK;
    size_t policy_bytes = (sizeof *rx->policy + b->line - 1) / b->line * b->line;
    rx->policy = aligned_alloc(b->line, policy_bytes);
    if (!rx->policy)
        return ts_fail(ENOMEM, "out of memory");
    memset(rx->policy, 0, policy_bytes);
    rx->policy->window_min_ns = ts_reactive_window_ns(ts_barrier_machine_online_cpus());
    rx->start = (uint32_t)(opts ? opts->start_episode : 0);
    rx->verbose = ts_env_verbose();
    rx->ran_stride = b->line;
    rx->ran = aligned_alloc(b->line, (size_t)b->n * b->line);
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (segment) {
        rx->shared = (ts_reactive_shared *)segment;
        rx->shared_memory = TS_REACTIVE_SHARED_IN_SEGMENT;
    } else if (opts && opts->process_shared) {
        void *p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        rx->shared = p == MAP_FAILED ? NULL : p;
        rx->shared_memory = TS_REACTIVE_SHARED_MAPPED;
    } else {
        rx->shared = aligned_alloc(b->line, b->line);
        if (rx->shared)
            memset(rx->shared, 0, b->line);
        rx->shared_memory = TS_REACTIVE_SHARED_ALLOCATED;
    }
    if (!rx->ran || !rx->shared)
        return ts_fail(ENOMEM, "out of memory");
    for (unsigned r = 0; r < b->n; r++)
        for (unsigned c = 0; c < TS_REACTIVE_MAX_CONFIGS; c++)
            /* relaxed: published by whatever starts the participants */
            atomic_store_explicit((_Atomic uint32_t *)(rx->ran + (size_t)r * rx->ran_stride) + c,
                                  rx->start, memory_order_relaxed);
    topsync_barrier_options_t o;
    robust_options(&o, opts, b);
    if (segment) {
        rc = attach(&rx->config[TS_REACTIVE_ROBUST], b->n, &o, segment + page, how->robust_bytes,
                    rank, false, REACTS_NEVER);
    } else {
        rc = create(&rx->config[TS_REACTIVE_ROBUST], b->n, &o, table, NULL, REACTS_NEVER);
    }
    if (rc < 0)
        return rc;
    topsync_barrier_t *robust = rx->config[TS_REACTIVE_ROBUST];
    robust_spin(robust);
    robust->ranks_by_arrival = b->ranks_by_arrival;
    /* online tuning: the candidate auto's rules set aside, a whole barrier
     * too (in a segment, after the robust one's part) */
    if (segment ? how->candidate_bytes != 0 : b->auto_candidate[0] != '\0') {
        topsync_barrier_options_t co;
        candidate_options(&co, opts, b);
        rc = segment ? attach(&rx->config[2], b->n, &co, segment + page + how->robust_bytes,
                              how->candidate_bytes, rank, false, REACTS_NEVER)
                     : create(&rx->config[2], b->n, &co, table, NULL, REACTS_NEVER);
        if (rc < 0)
            return rc;
        rx->config[2]->ranks_by_arrival = b->ranks_by_arrival;
        rx->nconfigs = 3;
    }
    /* where the last barrier of this shape settled (docs/design.md 10.6):
     * created, written before the handle reaches any participant, so
     * published as `ran` is; attached, by rank 0 (whose process decides),
     * as it writes the global block: every rank returns from attach before
     * any waits (barrier.h), and nothing else writes the plan before. */
    unsigned home = mode == TS_REACTIVE_ON && (!segment || rank == 0)
                        ? ts_reactive_memory_recall(rx, segment || (opts && opts->process_shared))
                        : 0;
    if (home)
        ts_reactive_start_on(rx, home);
    size_t len = strlen(b->explain);
    if (mode == TS_REACTIVE_EVERY)
        snprintf(b->explain + len, sizeof b->explain - len,
                 "; reactive (TOPSYNC_REACTIVE=every:%u): switches to %s/%s and back every %u "
                 "episodes",
                 every, robust->name, topsync_barrier_wait_policy_name(robust), every);
    else
        snprintf(b->explain + len, sizeof b->explain - len,
                 "; reactive (TOPSYNC_REACTIVE=on): switches to %s/%s when that is faster",
                 robust->name, topsync_barrier_wait_policy_name(robust));
    if (rx->nconfigs == 3) {
        len = strlen(b->explain);
        snprintf(b->explain + len, sizeof b->explain - len,
                 "; tries %s/%s online (what the rules set aside)", rx->config[2]->name,
                 topsync_barrier_wait_policy_name(rx->config[2]));
    }
    if (home) {
        len = strlen(b->explain);
        snprintf(b->explain + len, sizeof b->explain - len,
                 "; starts on %s/%s, where this process's last barrier of the same shape "
                 "settled",
                 rx->config[home]->name, topsync_barrier_wait_policy_name(rx->config[home]));
        if (rx->verbose >= 1)
            fprintf(stderr,
                    "topsync: barrier of %u participants starts on %s/%s, where this "
                    "process's last one of the same shape settled (TOPSYNC_REACTIVE)\n",
                    b->n, rx->config[home]->name,
                    topsync_barrier_wait_policy_name(rx->config[home]));
    }
    return 0;
}

static void reactive_free(topsync_barrier_t *b)
{
    ts_reactive *rx = b->reactive;
    if (!rx)
        return;
    b->reactive = NULL;
    /* the home and gap participant 0's policy kept, for the next barrier
     * of this shape: only where participant 0 decided, in this process (a
     * window ended) */
    if (rx->mode == TS_REACTIVE_ON && rx->policy && rx->policy->measured_once)
        ts_reactive_memory_keep(rx, rx->shared_memory != TS_REACTIVE_SHARED_ALLOCATED);
    for (unsigned c = 1; c < TS_REACTIVE_MAX_CONFIGS; c++)
        topsync_barrier_destroy(rx->config[c]);
    free(rx->ran);
    free(rx->policy);
    if (rx->shared_memory == TS_REACTIVE_SHARED_MAPPED && rx->shared)
        munmap(rx->shared, (size_t)sysconf(_SC_PAGESIZE));
    else if (rx->shared_memory == TS_REACTIVE_SHARED_ALLOCATED)
        free(rx->shared);
    free(rx);
}

int ts_barrier_make_reactive(topsync_barrier_t *b, const topsync_barrier_options_t *opts)
{
    if (b->reactive)
        return 0;
    b->by_auto = true;
    struct reaction how;
    int rc = reaction_for(b, opts, ts_algorithms, false, REACTS_IF_CHOSEN, &how);
    if (rc > 0)
        rc = make_reactive(b, opts, ts_algorithms, &how, NULL, 0);
    if (rc < 0)
        reactive_free(b);
    return rc < 0 ? rc : 0;
}

void ts_barrier_carry(topsync_barrier_t *b,
                      void (*gathered)(const topsync_barrier_t *b, unsigned leader,
                                       const unsigned *members, unsigned nmembers, bool last),
                      void (*completed)(const topsync_barrier_t *b, unsigned rank), void *arg)
{
    b->gathered = gathered;
    b->gathered_arg = arg;
    ts_reactive *rx = b->reactive;
    for (unsigned c = 1; rx && c < rx->nconfigs; c++) {
        rx->config[c]->completed = completed;
        rx->config[c]->gathered_arg = arg;
    }
}

int topsync_barrier_create(topsync_barrier_t **out, unsigned n,
                           const topsync_barrier_options_t *opts)
{
    return ts_barrier_create_with(out, n, opts, ts_algorithms, NULL);
}

static int segment_size(unsigned n, const topsync_barrier_options_t *opts, enum reacts reacts,
                        size_t *size)
{
    topsync_barrier_t *b, *dummy;
    if (!size)
        return ts_fail(EINVAL, "topsync_barrier_segment_size: size is NULL");
    int rc = prepare(&dummy, n, opts, ts_algorithms, NULL, true, &b);
    if (rc < 0)
        return rc;
    *size = b->size;
    /* a reactive barrier's plan and robust configuration follow */
    struct reaction how;
    rc = reaction_for(b, opts, ts_algorithms, true, reacts, &how);
    *size += how.segment_bytes;
    free_barrier(b);
    return rc < 0 ? rc : 0;
}

int topsync_barrier_segment_size(unsigned n, const topsync_barrier_options_t *opts, size_t *size)
{
    return segment_size(n, opts, REACTS_IF_CHOSEN, size);
}

/* What every participant of one segment must agree on: n, the algorithm
 * with its options, the layout and the wait kind (a spinning publisher does
 * not wake a sleeping waiter). FNV-1a; never 0 (0 is "not set yet"). */
static uint32_t fingerprint(const topsync_barrier_t *b)
{
    uint32_t h = TS_FNV1A32_OFFSET;
    uint64_t fields[] = {b->n,          b->line,         b->block_bytes,
                         b->level_mask, b->tree_release, (uint64_t)b->wait.kind,
                         b->reacts_as};
    /* byte by byte, least significant first: the same on every process;
     * reacts_as only when set (a barrier of one configuration keeps the
     * fingerprint it always had) */
    size_t nfields = sizeof fields / sizeof fields[0] - (b->reacts_as == 0);
    for (size_t i = 0; i < nfields; i++)
        for (unsigned k = 0; k < 8; k++) {
            uint8_t byte = (uint8_t)(fields[i] >> (8 * k));
            h = ts_fnv1a32(h, &byte, 1);
        }
    h = ts_fnv1a32(h, b->name, strlen(b->name));
    return h ? h : 1;
}

/* The first to attach records the fingerprint (CAS on the zero-filled
 * word); every other compares. relaxed: the word orders nothing, it only
 * has one value once set (a single CAS from 0). */
static int check_fingerprint(topsync_barrier_t *b, unsigned rank)
{
    _Atomic uint32_t *word = &ts_global_line(b, 0)->value;
    uint32_t mine = fingerprint(b), seen = 0;
    if (atomic_compare_exchange_strong_explicit(word, &seen, mine, memory_order_relaxed,
                                                memory_order_relaxed) ||
        seen == mine)
        return 0;
    return ts_fail(EINVAL,
                   "barrier: participant %u attaches with n = %u, algorithm %s, wait %s, "
                   "but the segment was set up by a participant with different ones "
                   "(every process must pass the same n and options; a reused "
                   "segment must be zero-filled again)",
                   rank, b->n, b->name, topsync_barrier_wait_policy_name(b));
}

/*
 * Whether [addr, addr + size) is mapped readable and writable in this
 * process, from /proc/self/maps: 1, 0, or -1 when that cannot be read (the
 * check is then skipped). A read-only mapping would otherwise crash the
 * first store of attach.
 */
static int mapping_writable(const void *addr, size_t size)
{
    FILE *f = fopen("/proc/self/maps", "re");
    if (!f)
        return -1;
    uintptr_t at = (uintptr_t)addr, end = at + size;
    char line[512];
    while (at < end && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char perms[8];
        if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3)
            continue;
        if (lo <= at && at < hi) {
            if (perms[0] != 'r' || perms[1] != 'w')
                break;
            at = hi; /* maps is sorted: the rest, if any, comes next */
        }
        if (strchr(line, '\n') == NULL) /* a long path: skip the rest of the line */
            for (int c = fgetc(f); c != EOF && c != '\n'; c = fgetc(f))
                ;
    }
    fclose(f);
    return at >= end;
}

/* What every process attached to one segment must agree on when b reacts
 * (the fingerprint's reacts_as): TOPSYNC_REACTIVE's mode and N, and which
 * candidate rides along, if any (auto's rules may differ between processes
 * given another TOPSYNC_AUTO or tuning file). */
static uint64_t reacts_as(const topsync_barrier_t *b, const struct reaction *how)
{
    uint64_t candidate = 0;
    if (how->candidate_bytes)
        candidate =
            1 + ts_fnv1a32(TS_FNV1A32_OFFSET, b->auto_candidate, strlen(b->auto_candidate)) % 4095u;
    return (uint64_t)how->mode << 32 | how->every | candidate << 40;
}

/* Attach; check_mapping: read /proc/self/maps to refuse a segment that is
 * not read-write (about 170 us in an MPI process of 400 mappings). */
static int attach(topsync_barrier_t **out, unsigned n, const topsync_barrier_options_t *opts,
                  void *segment, size_t size, unsigned rank, bool check_mapping, enum reacts reacts)
{
    topsync_barrier_t *b;
    int rc = prepare(out, n, opts, ts_algorithms, NULL, true, &b);
    if (rc < 0)
        return rc;
    if (!segment || ((uintptr_t)segment % (uintptr_t)sysconf(_SC_PAGESIZE)) != 0) {
        free_barrier(b);
        return ts_fail(EINVAL, "barrier: segment %p is NULL or not page aligned", segment);
    }
    struct reaction how = {.segment_bytes = 0};
    if (reacts != REACTS_NEVER &&
        (rc = reaction_for(b, opts, ts_algorithms, true, reacts, &how)) < 0) {
        free_barrier(b);
        return rc;
    }
    size_t extra = how.segment_bytes;
    if (size < b->size + extra) {
        size_t need = b->size + extra;
        free_barrier(b);
        return ts_fail(EINVAL, "barrier: segment of %zu bytes, %zu needed", size, need);
    }
    if (rank >= n) {
        free_barrier(b);
        return ts_fail(EINVAL, "barrier: rank %u out of range (%u participants)", rank, n);
    }
    if (check_mapping && mapping_writable(segment, b->size + extra) == 0) {
        size_t need = b->size + extra;
        free_barrier(b);
        return ts_fail(EINVAL,
                       "barrier: the segment at %p (%zu bytes) is not all mapped "
                       "readable and writable (map it PROT_READ | PROT_WRITE)",
                       segment, need);
    }
    b->base = segment;
    b->owns_mapping = false;
    set_peers(b);
    b->wait.process_shared = true;
    b->reacts_as = extra ? reacts_as(b, &how) : 0; /* one layout for all */
    rc = check_fingerprint(b, rank);
    if (rc < 0) {
        free_barrier(b);
        return rc;
    }
    uint32_t start = (uint32_t)(opts ? opts->start_episode : 0);
    /* First touch: my block from me, the global block from rank 0. */
    fill_block(b, (int)rank, start);
    if (rank == 0)
        fill_block(b, -1, start);
    rc = b->algo->setup ? b->algo->setup(b) : 0;
    if (rc == 0 && extra)
        rc = make_reactive(b, opts, ts_algorithms, &how, (unsigned char *)segment + b->size, rank);
    if (rc < 0) {
        free_barrier(b);
        return rc;
    }
    ts_registry_add(&live_barriers, &b->live);
    *out = b;
    return 0;
}

int topsync_barrier_attach(topsync_barrier_t **out, unsigned n,
                           const topsync_barrier_options_t *opts, void *segment, size_t size,
                           unsigned rank)
{
    return attach(out, n, opts, segment, size, rank, true, REACTS_IF_CHOSEN);
}

int ts_barrier_attach_mapped(topsync_barrier_t **out, unsigned n,
                             const topsync_barrier_options_t *opts, void *segment, size_t size,
                             unsigned rank)
{
    return attach(out, n, opts, segment, size, rank, false, REACTS_IF_CHOSEN);
}

int ts_barrier_create_carrier(topsync_barrier_t **out, unsigned n,
                              const topsync_barrier_options_t *opts)
{
    return create(out, n, opts, ts_algorithms, NULL, REACTS_AS_CARRIER);
}

int ts_barrier_attach_carrier(topsync_barrier_t **out, unsigned n,
                              const topsync_barrier_options_t *opts, void *segment, size_t size,
                              unsigned rank, bool check_mapping)
{
    return attach(out, n, opts, segment, size, rank, check_mapping, REACTS_AS_CARRIER);
}

int ts_barrier_segment_size_carrier(unsigned n, const topsync_barrier_options_t *opts, size_t *size)
{
    return segment_size(n, opts, REACTS_AS_CARRIER, size);
}

/* Destroyed handles, kept recognisable (their state freed, the struct kept)
 * so that a second destroy or a wait after destroy is an error with a
 * message, not a crash; the oldest is freed once BARRIER_QUARANTINE more
 * were destroyed. */
#define BARRIER_QUARANTINE 1024u
static pthread_mutex_t quarantine_mutex = PTHREAD_MUTEX_INITIALIZER;
static topsync_barrier_t *quarantine[BARRIER_QUARANTINE];
static unsigned quarantine_next;

int topsync_barrier_destroy(topsync_barrier_t *b)
{
    if (!b)
        return 0;
    /* the link's address is computed, never read: b may be any pointer; of
     * two threads destroying one handle, one takes it and the other fails */
    if (!ts_registry_take(
            &live_barriers,
            (const ts_registry_link_t *)((const char *)b + offsetof(topsync_barrier_t, live))))
        return ts_barrier_dead_handle("topsync_barrier_destroy", b);
    release_state(b);
    b->magic = TS_BARRIER_DEAD;
    b->n = 0;
    pthread_mutex_lock(&quarantine_mutex);
    topsync_barrier_t *oldest = quarantine[quarantine_next];
    quarantine[quarantine_next] = b;
    quarantine_next = (quarantine_next + 1) % BARRIER_QUARANTINE;
    pthread_mutex_unlock(&quarantine_mutex);
    free(oldest);
    return 0;
}
