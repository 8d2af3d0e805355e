/*
 * Barrier objects: algorithm selection by name, the shared segment, the
 * defaults, and the entry point that all algorithms share.
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
#include "base/error.h"
#include "base/keywords.h"
#include "topology/topology_private.h"

topsync_groups_t *ts_groups_clone(const topsync_groups_t *g);

#define TS_ALGORITHM_ADDRESS(stem, name) &TS_ALGO(stem),
const ts_algorithm *const ts_algorithms[TS_NALGORITHMS] = {
    TS_ALGORITHM_LIST(TS_ALGORITHM_ADDRESS)};
#undef TS_ALGORITHM_ADDRESS
#define NALGORITHMS TS_NALGORITHMS

#ifndef TS_SPIN_DEFAULT
#define TS_SPIN_DEFAULT 4096
#endif
#ifndef TS_YIELD_OVERSUBSCRIBED
#define TS_YIELD_OVERSUBSCRIBED 16
#endif
#ifndef TS_SPIN_OVERSUBSCRIBED
#define TS_SPIN_OVERSUBSCRIBED 0
#endif
#ifndef TS_SPIN_OVERSUBSCRIBED_DISJOINT
#define TS_SPIN_OVERSUBSCRIBED_DISJOINT 256
#endif

#define TS_ALGORITHM_NAME(stem, name) name,
static const char *const algorithm_names[] = {"auto", TS_ALGORITHM_LIST(TS_ALGORITHM_NAME) NULL};
#undef TS_ALGORITHM_NAME

const char *const *topsync_barrier_algorithm_names(void)
{
    return algorithm_names;
}

#define TS_ALGORITHM_WORD(stem, name) name ", "
#define VALID_ALGORITHMS                                                                \
    "auto, " TS_ALGORITHM_LIST(TS_ALGORITHM_WORD) "topo:LEVELS (LEVELS a "             \
    "comma-separated list of l2, l3, numa, socket), each topo form optionally "        \
    "followed by /global or /tree"

/* ---------------------------------------------------------------------- */
/* Machine facts, read once through hwloc.                                  */

static pthread_once_t machine_once = PTHREAD_ONCE_INIT;
static size_t machine_line_size = 128;
static unsigned machine_cpus = 1;

static void machine_probe(void)
{
    topsync_topology_t *t;
    if (topsync_topology_load(&t) != 0)
        return; /* keep the safe fallbacks */
    machine_line_size = topsync_topology_line_size(t);
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (set && hwloc_get_cpubind(t->hwloc, set, HWLOC_CPUBIND_PROCESS) == 0 &&
        !hwloc_bitmap_iszero(set))
        machine_cpus = (unsigned)hwloc_bitmap_weight(set);
    else
        machine_cpus = (unsigned)hwloc_bitmap_weight(hwloc_topology_get_allowed_cpuset(t->hwloc));
    hwloc_bitmap_free(set);
    topsync_topology_destroy(t);
}

/* ---------------------------------------------------------------------- */
/* Names.                                                                    */

struct parsed_algorithm {
    const ts_algorithm *algo; /* NULL for auto */
    unsigned level_mask;
    bool tree_release;
    bool mode_given;
};

static int parse_algorithm(const char *name, struct parsed_algorithm *out, const char *origin)
{
    memset(out, 0, sizeof *out);
    out->level_mask = TOPSYNC_LEVELS_ALL;
    if (!name || !*name)
        return ts_fail(EINVAL, "%sempty algorithm name; valid: " VALID_ALGORITHMS, origin);
    if (!strcasecmp(name, "auto"))
        return 0;
    for (size_t i = 0; i < NALGORITHMS; i++) {
        if (ts_algorithms[i] != &ts_algo_topo && !strcasecmp(name, ts_algorithms[i]->name)) {
            out->algo = ts_algorithms[i];
            return 0;
        }
    }
    if (strncasecmp(name, "topo", 4) == 0 && (name[4] == '\0' || name[4] == ':' || name[4] == '/')) {
        char buf[128];
        if (strlen(name) >= sizeof buf)
            return ts_fail(EINVAL, "%salgorithm name too long: '%.40s...'", origin, name);
        strcpy(buf, name);
        char *mode = strchr(buf, '/');
        if (mode) {
            *mode++ = '\0';
            static const ts_keyword_t modes[] = {
                {"global", 0, false},
                {"tree", 1, false},
                {NULL, 0, false},
            };
            const ts_keyword_t *m = ts_keyword_find(modes, mode);
            if (!m) {
                char valid[64];
                ts_keywords_valid(modes, valid, sizeof valid);
                return ts_fail(EINVAL, "%sunknown topo release mode '%s' in '%s'; valid: %s",
                               origin, mode, name, valid);
            }
            out->tree_release = m->value;
            out->mode_given = true;
        }
        if (buf[4] == ':') {
            int rc = topsync_levels_parse(buf + 5, &out->level_mask);
            if (rc < 0)
                return ts_fail(EINVAL, "%sin algorithm '%s': %s", origin, name,
                               topsync_error_message());
        }
        out->algo = &ts_algo_topo;
        return 0;
    }
    if (!strcasecmp(name, "mpi"))
        return ts_fail(EINVAL, "%s'mpi' is a value for the MPI library only (libtopsync-mpi: "
                       "the MPI's own barrier); for this barrier, valid: " VALID_ALGORITHMS,
                       origin);
    return ts_fail(EINVAL, "%sunknown barrier algorithm '%s'; valid: " VALID_ALGORITHMS, origin,
                   name);
}

int topsync_barrier_algorithm_validate(const char *name)
{
    struct parsed_algorithm p;
    return parse_algorithm(name, &p, "");
}

static void level_list(unsigned mask, char *buf, size_t len)
{
    static const struct { unsigned bit; const char *word; } words[] = {
        {TOPSYNC_LEVEL_L2, "l2"}, {TOPSYNC_LEVEL_L3, "l3"},
        {TOPSYNC_LEVEL_NUMA, "numa"}, {TOPSYNC_LEVEL_PACKAGE, "socket"},
    };
    buf[0] = '\0';
    for (size_t i = 0; i < 4; i++)
        if (mask & words[i].bit) {
            if (buf[0])
                strncat(buf, ",", len - strlen(buf) - 1);
            strncat(buf, words[i].word, len - strlen(buf) - 1);
        }
    if (!buf[0])
        snprintf(buf, len, "flat");
}

/* ---------------------------------------------------------------------- */
/* Options and defaults.                                                    */

void topsync_barrier_options_init(topsync_barrier_options_t *o)
{
    if (o)
        memset(o, 0, sizeof *o);
}

struct resolved {
    struct parsed_algorithm alg;
    topsync_wait_policy_t wait;
    bool wait_given; /* by the options or TOPSYNC_WAIT: auto keeps it */
    bool oversubscribed;
    bool disjoint_cpus; /* every participant bound, no CPU shared by two of them */
    bool fits_cpus;     /* the participants alone would not oversubscribe their CPUs */
    bool given_by_env; /* the algorithm came from TOPSYNC_BARRIER */
};

/* auto, as registered by select/auto.c (see barrier_private.h). */
static _Atomic(const struct ts_barrier_chooser *) chooser;

void ts_barrier_set_chooser(const struct ts_barrier_chooser *c)
{
    /* release: pairs with the acquire loads in auto_check and choose_auto,
     * so that a barrier created on another thread sees *c whole */
    atomic_store_explicit(&chooser, c, memory_order_release);
}

static int auto_check(void)
{
    /* acquire: pairs with the release in ts_barrier_set_chooser */
    const struct ts_barrier_chooser *c = atomic_load_explicit(&chooser, memory_order_acquire);
    return c ? c->check() : 0;
}

static int resolve(unsigned n, const topsync_barrier_options_t *o, struct resolved *r)
{
    const char *name = o->algorithm;
    const char *origin = "";
    if (!name) {
        name = ts_getenv("TOPSYNC_BARRIER");
        origin = "TOPSYNC_BARRIER: ";
        if (!name)
            name = "auto";
    }
    int rc = parse_algorithm(name, &r->alg, origin);
    if (rc < 0)
        return rc;
    r->given_by_env = origin[0] != '\0';
    if (!r->alg.algo && (rc = auto_check()) < 0)
        return rc;

    r->wait = o->wait;
    r->wait_given = o->wait != TOPSYNC_WAIT_DEFAULT || ts_getenv("TOPSYNC_WAIT");
    rc = ts_wait_policy_resolve(&r->wait);
    if (rc < 0)
        return rc;
    /* Oversubscribed: more runnable participants than the CPUs they run on
     * together.
     * With bindings that is their union (an MPI rank bound to one core must
     * not count as a one-CPU machine); without, the process's CPUs. */
    pthread_once(&machine_once, machine_probe);
    unsigned cpus = machine_cpus;
    r->disjoint_cpus = false;
    if (o->cpusets && o->topology) {
        hwloc_bitmap_t all = hwloc_bitmap_alloc();
        long sum = 0;
        bool bound = all != NULL;
        for (unsigned i = 0; all && i < n; i++) {
            if (o->cpusets[i]) {
                hwloc_bitmap_or(all, all, o->cpusets[i]);
                sum += hwloc_bitmap_weight(o->cpusets[i]);
            }
            bound &= o->cpusets[i] != NULL;
        }
        int w = all ? hwloc_bitmap_weight(all) : -1;
        if (w > 0)
            cpus = (unsigned)w;
        /* disjoint: the union is as large as the sets together */
        r->disjoint_cpus = bound && w > 0 && sum == w;
        hwloc_bitmap_free(all);
    }
    /* The load on those CPUs: the caller may know of more runnable
     * participants than this barrier's (every rank of the job on the node,
     * in the MPI library), and those take the CPUs as much. */
    unsigned load = o->cpu_sharers > n ? o->cpu_sharers : n;
    r->oversubscribed = load > cpus;
    r->fits_cpus = n <= cpus;
    return 0;
}

static void wait_settings(ts_wait *w, const struct resolved *r, bool process_shared,
                          long spin_override)
{
    topsync_wait_policy_t p = r->wait;
    w->kind = p == TOPSYNC_WAIT_SPIN ? TS_WAIT_SPIN
              : p == TOPSYNC_WAIT_YIELD ? TS_WAIT_YIELD : TS_WAIT_BLOCK;
    /* Spinning only pays while the awaited participant runs on another CPU.
     * Oversubscribed, it most likely waits for our CPU: give the CPU up at
     * once, and yield a while before sleeping, since a futex sleep and wake
     * cost more than a few yields (measured with topsync-bench: MPI np=8 on
     * 2 cores 0.35-0.47x Open MPI's barrier with 16 yields against 0.74-1.3x
     * with 64 pauses and 1 yield; 64 threads 60-77 us against 110-150 us).
     * Unless this barrier's participants are bound to CPUs of their own and
     * only other processes share them (the pairs of an oversubscribed MPI
     * job bound to cores): the awaited one may then be running right now,
     * and a spin about as long as a switch costs before yielding (the
     * competitive rule) catches it when it is. Measured with
     * scripts/mpi_oversub.sh, Open MPI np 4 pairs bound to cores: 0.84x of
     * Open MPI's barrier with no spin, 0.12x with 16 pauses, 0.05x with 256;
     * np 8 pairs 0.86x, 0.19x, 0.05x; halves (4 ranks on 2 CPUs, not
     * disjoint) 0.63x with no spin, 2.3x with 256, hence only when disjoint. */
    w->spin_iterations = !r->oversubscribed ? TS_SPIN_DEFAULT
                         : r->disjoint_cpus ? TS_SPIN_OVERSUBSCRIBED_DISJOINT
                                            : TS_SPIN_OVERSUBSCRIBED;
    /* Not bound apart, but few enough to fit the CPUs, and oversubscribed
     * by other processes: spin that much only when no other participant
     * was last seen on this CPU (wait.h, adaptive spin; unbound pairs of an
     * oversubscribed job). With more participants than CPUs some always
     * share one: no spin, as above. */
    w->adaptive_spin = 0;
    if (r->oversubscribed && !r->disjoint_cpus && r->fits_cpus && spin_override < 0) {
        w->adaptive_spin = TS_SPIN_OVERSUBSCRIBED_DISJOINT;
        w->spin_iterations = 0;
    }
    if (spin_override >= 0)
        w->spin_iterations = (uint32_t)spin_override;
    w->yield_iterations = r->oversubscribed ? TS_YIELD_OVERSUBSCRIBED : 8;
    w->process_shared = process_shared;
}

/* TOPSYNC_SPIN: spin iterations before yielding or sleeping; -1 if unset. */
static int spin_from_env(long *out)
{
    const char *v = ts_getenv("TOPSYNC_SPIN");
    *out = -1;
    if (!v)
        return 0;
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (errno || *end || end == v || ts_env_leading_space(v) || n < 0 || n > 100000000)
        return ts_fail(EINVAL, "TOPSYNC_SPIN='%s' is not valid; valid: a whole number of "
                               "iterations from 0 to 100000000", v);
    *out = n;
    return 0;
}

/* TOPSYNC_POLL: how a leader waits for its members (ts_wait_all): scan
 * (the default) or ordered; *ordered is false when unset. */
static int poll_from_env(bool *ordered)
{
    const char *v = ts_getenv("TOPSYNC_POLL");
    *ordered = false;
    if (!v || !strcmp(v, "scan"))
        return 0;
    if (!strcmp(v, "ordered")) {
        *ordered = true;
        return 0;
    }
    return ts_fail(EINVAL, "TOPSYNC_POLL='%s' is not valid; valid: scan (read every member "
                           "on each pass, the default), ordered (wait for one member after "
                           "another)", v);
}

/* TOPSYNC_TIMEOUT: seconds (0: none); *out is 0 when unset. */
static int timeout_from_env(double *out)
{
    const char *v = ts_getenv("TOPSYNC_TIMEOUT");
    *out = 0;
    if (!v)
        return 0;
    char *end;
    errno = 0;
    double t = strtod(v, &end);
    if (errno || *end || end == v || ts_env_leading_space(v) || !(t >= 0 && t <= 1e6))
        return ts_fail(EINVAL, "TOPSYNC_TIMEOUT='%s' is not valid; valid: a number of seconds "
                               "from 0 (no timeout) to 1000000, e.g. 30 or 0.5", v);
    *out = t;
    return 0;
}

int ts_barrier_environment_check(void)
{
    struct parsed_algorithm alg;
    const char *name = ts_getenv("TOPSYNC_BARRIER");
    if (name && parse_algorithm(name, &alg, "TOPSYNC_BARRIER: ") < 0)
        return -EINVAL;
    const char *wait = ts_getenv("TOPSYNC_WAIT");
    topsync_wait_policy_t policy;
    if (wait && topsync_wait_policy_parse(wait, &policy) < 0)
        return ts_fail(EINVAL, "TOPSYNC_WAIT: %s", topsync_error_message());
    long spin;
    if (spin_from_env(&spin) < 0)
        return -EINVAL;
    double timeout;
    if (timeout_from_env(&timeout) < 0)
        return -EINVAL;
    bool ordered;
    if (poll_from_env(&ordered) < 0)
        return -EINVAL;
    return 0;
}

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

/* Resolve "auto" (src/select/auto.c) into r, and say how in b->explain. */
static void choose_auto(topsync_barrier_t *b, const topsync_barrier_options_t *opts,
                        const topsync_groups_t *groups, const topsync_model_t *model,
                        struct resolved *r)
{
    struct ts_auto_request req = {
        .n = b->n, .topology = opts->topology, .cpusets = opts->cpusets, .groups = groups,
        .oversubscribed = r->oversubscribed, .processes = opts->process_shared != 0 || b->attached,
        .wait = r->wait, .model = model};
    struct ts_auto_choice choice;
    /* acquire: pairs with the release in ts_barrier_set_chooser */
    const struct ts_barrier_chooser *c = atomic_load_explicit(&chooser, memory_order_acquire);
    if (c) {
        c->choose(&req, &choice);
    } else { /* never in the library: auto.c registers itself at load */
        snprintf(choice.algorithm, sizeof choice.algorithm, "dissemination");
        choice.wait = TOPSYNC_WAIT_DEFAULT;
        snprintf(choice.explain, sizeof choice.explain, "rules: dissemination (no chooser "
                                                        "registered)");
    }
    struct parsed_algorithm alg;
    if (parse_algorithm(choice.algorithm, &alg, "") < 0 || !alg.algo) {
        /* auto's names are the library's own: never happens */
        snprintf(choice.explain, sizeof choice.explain, "rules: dissemination (auto chose "
                                                        "'%s', which is not an algorithm)",
                 choice.algorithm);
        parse_algorithm("dissemination", &alg, "");
        choice.wait = TOPSYNC_WAIT_DEFAULT;
    }
    r->alg = alg;
    const char *kept = "";
    if (choice.wait != TOPSYNC_WAIT_DEFAULT) {
        if (r->wait_given && choice.wait != r->wait)
            kept = " (wait policy given: kept)";
        else
            r->wait = choice.wait;
    }
    snprintf(b->explain, sizeof b->explain, "auto: %s%s", choice.explain, kept);
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
        return ts_fail(EINVAL, "barrier: %u participants; the limit is %u "
                       "(TOPSYNC_BARRIER_MAX_PARTICIPANTS)", n, TOPSYNC_BARRIER_MAX_PARTICIPANTS);
    if (!opts) {
        topsync_barrier_options_init(&defaults);
        opts = &defaults;
    }
    struct resolved r;
    int rc = resolve(n, opts, &r);
    if (rc < 0)
        return rc;
    if (opts->cpusets && !opts->topology)
        return ts_fail(EINVAL, "barrier: cpusets given without their topology");
    if (opts->groups && topsync_groups_nparticipants(opts->groups) != n)
        return ts_fail(EINVAL, "barrier: groups are for %u participants, barrier for %u",
                       topsync_groups_nparticipants(opts->groups), n);
    size_t line = opts->line_size ? opts->line_size : machine_line_size;
    if (line & (line - 1))
        return ts_fail(EINVAL, "barrier: line size %zu is not a power of two (valid: %d to %d)",
                       line, TS_MIN_LINE, TS_MAX_LINE);
    if (line < TS_MIN_LINE || line > TS_MAX_LINE)
        return ts_fail(EINVAL, "barrier: line size %zu is not in [%d, %d]", line, TS_MIN_LINE,
                       TS_MAX_LINE);

    long spin;
    rc = spin_from_env(&spin);
    if (rc < 0)
        return rc;
    bool ordered_poll;
    rc = poll_from_env(&ordered_poll);
    if (rc < 0)
        return rc;
    double timeout = opts->timeout_seconds;
    bool timeout_by_env = timeout == 0;
    if (timeout != timeout || timeout > 1e6)
        return ts_fail(EINVAL, "barrier: timeout_seconds %g is not valid; valid: up to 1000000, "
                               "0 for $TOPSYNC_TIMEOUT, negative for none", timeout);
    if (timeout == 0) {
        rc = timeout_from_env(&timeout);
        if (rc < 0)
            return rc;
    }
    if (timeout < 0)
        timeout = 0;
    double idle_interval = opts->idle_interval_seconds;
    if (idle_interval != idle_interval || idle_interval < 0 || idle_interval > 1e6)
        return ts_fail(EINVAL, "barrier: idle_interval_seconds %g is not valid; valid: 0 "
                               "(0.1 s) to 1000000", idle_interval);
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
        choose_auto(b, opts, groups, model, &r);
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
        snprintf(b->explain, sizeof b->explain, "given: %s", r.given_by_env
                                                               ? "TOPSYNC_BARRIER"
                                                               : "options.algorithm");
    }
    b->level_mask = r.alg.level_mask;
    b->tree_release = r.alg.tree_release;
    wait_settings(&b->wait, &r, opts->process_shared != 0, spin);
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
            level_list(mask, levels, sizeof levels); /* "flat": no level shared */
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

/* Where the adaptive spin reads the participants' CPUs: line 0 of each
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

/* Free what the barrier holds (roles, mapping, groups), not the handle. */
static void release_state(topsync_barrier_t *b)
{
    if (b->roles) {
        if (b->algo->free_roles)
            b->algo->free_roles(b);
        else
            free(b->roles);
        b->roles = NULL;
    }
    if (b->owns_mapping && b->base)
        munmap(b->base, b->size);
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

int ts_barrier_create_with(topsync_barrier_t **out, unsigned n,
                           const topsync_barrier_options_t *opts,
                           const ts_algorithm *const table[TS_NALGORITHMS],
                           const topsync_model_t *model)
{
    topsync_barrier_t *b;
    int rc = prepare(out, n, opts, table, model, false, &b);
    if (rc < 0)
        return rc;
    int shared = opts && opts->process_shared;
    void *mem = mmap(NULL, b->size, PROT_READ | PROT_WRITE,
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
    if (opts && opts->topology && opts->cpusets &&
        strcmp(topsync_topology_source(opts->topology), "this machine") == 0) {
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
    if (rc < 0) {
        free_barrier(b);
        return rc;
    }
    ts_registry_add(&live_barriers, &b->live);
    *out = b;
    return 0;
}

int topsync_barrier_create(topsync_barrier_t **out, unsigned n,
                           const topsync_barrier_options_t *opts)
{
    return ts_barrier_create_with(out, n, opts, ts_algorithms, NULL);
}

int topsync_barrier_segment_size(unsigned n, const topsync_barrier_options_t *opts,
                                 size_t *size)
{
    topsync_barrier_t *b, *dummy;
    if (!size)
        return ts_fail(EINVAL, "topsync_barrier_segment_size: size is NULL");
    int rc = prepare(&dummy, n, opts, ts_algorithms, NULL, true, &b);
    if (rc < 0)
        return rc;
    *size = b->size;
    free_barrier(b);
    return 0;
}

/* What every participant of one segment must agree on: n, the algorithm
 * with its options, the layout and the wait kind (a spinning publisher does
 * not wake a sleeping waiter). FNV-1a; never 0 (0 is "not set yet"). */
static uint32_t fingerprint(const topsync_barrier_t *b)
{
    uint32_t h = 2166136261u;
    uint64_t fields[] = {b->n, b->line, b->block_bytes, b->level_mask, b->tree_release,
                         (uint64_t)b->wait.kind};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        for (unsigned k = 0; k < 8; k++)
            h = (h ^ (uint8_t)(fields[i] >> (8 * k))) * 16777619u;
    for (const char *c = b->name; *c; c++)
        h = (h ^ (uint8_t)*c) * 16777619u;
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
    return ts_fail(EINVAL, "barrier: participant %u attaches with n = %u, algorithm %s, wait %s, "
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

/* Attach; check_mapping: read /proc/self/maps to refuse a segment that is
 * not read-write (about 170 us in an MPI process of 400 mappings). */
static int attach(topsync_barrier_t **out, unsigned n, const topsync_barrier_options_t *opts,
                  void *segment, size_t size, unsigned rank, bool check_mapping)
{
    topsync_barrier_t *b;
    int rc = prepare(out, n, opts, ts_algorithms, NULL, true, &b);
    if (rc < 0)
        return rc;
    if (!segment || ((uintptr_t)segment % (uintptr_t)sysconf(_SC_PAGESIZE)) != 0) {
        free_barrier(b);
        return ts_fail(EINVAL, "barrier: segment %p is NULL or not page aligned", segment);
    }
    if (size < b->size) {
        size_t need = b->size;
        free_barrier(b);
        return ts_fail(EINVAL, "barrier: segment of %zu bytes, %zu needed", size, need);
    }
    if (rank >= n) {
        free_barrier(b);
        return ts_fail(EINVAL, "barrier: rank %u out of range (%u participants)", rank, n);
    }
    if (check_mapping && mapping_writable(segment, b->size) == 0) {
        size_t need = b->size;
        free_barrier(b);
        return ts_fail(EINVAL, "barrier: the segment at %p (%zu bytes) is not all mapped "
                       "readable and writable (map it PROT_READ | PROT_WRITE)", segment, need);
    }
    b->base = segment;
    b->owns_mapping = false;
    set_peers(b);
    b->wait.process_shared = true;
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
    return attach(out, n, opts, segment, size, rank, true);
}

int ts_barrier_attach_mapped(topsync_barrier_t **out, unsigned n,
                             const topsync_barrier_options_t *opts, void *segment, size_t size,
                             unsigned rank)
{
    return attach(out, n, opts, segment, size, rank, false);
}

/* Destroyed handles, kept recognisable (their state freed, the struct kept)
 * so that a second destroy or a wait after destroy is an error with a
 * message, not a crash; the oldest is freed once BARRIER_QUARANTINE more
 * were destroyed. */
#define BARRIER_QUARANTINE 1024u
static pthread_mutex_t quarantine_mutex = PTHREAD_MUTEX_INITIALIZER;
static topsync_barrier_t *quarantine[BARRIER_QUARANTINE];
static unsigned quarantine_next;

static bool handle_live(const topsync_barrier_t *b)
{
    return b && b->magic == TS_BARRIER_LIVE;
}

static int dead_handle(const char *fn, const topsync_barrier_t *b)
{
    if (!b)
        return ts_fail(EINVAL, "%s: barrier is NULL", fn);
    return ts_fail(EINVAL, "%s: barrier %p was destroyed (or is not a topsync barrier)", fn,
                   (const void *)b);
}

int topsync_barrier_destroy(topsync_barrier_t *b)
{
    if (!b)
        return 0;
    /* the link's address is computed, never read: b may be any pointer; of
     * two threads destroying one handle, one takes it and the other fails */
    if (!ts_registry_take(&live_barriers, (const ts_registry_link_t *)((const char *)b +
                                          offsetof(topsync_barrier_t, live))))
        return dead_handle("topsync_barrier_destroy", b);
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

static inline uint32_t enter_episode(topsync_barrier_t *b, unsigned rank)
{
    ts_word *local = ts_rank_line(b, rank, 0);
    if (b->wait.adaptive_spin) {
        int cpu = sched_getcpu();
        ts_wait_rank = rank;
        /* relaxed: a hint for the other participants' spin (wait.h) */
        atomic_store_explicit(&local->aux, cpu < 0 ? 0u : (uint32_t)cpu + 1,
                              memory_order_relaxed);
    }
    /* relaxed: line 0 is written by its owner only; others read it only to
     * report who is missing after a timeout (topsync_barrier_missing) */
    uint32_t episode = atomic_load_explicit(&local->value, memory_order_relaxed) + 1;
    atomic_store_explicit(&local->value, episode, memory_order_relaxed);
    return episode;
}

int topsync_barrier_missing(const topsync_barrier_t *b, unsigned rank, unsigned *out,
                            unsigned max)
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

/* The -ETIMEDOUT message: who has not arrived. */
static int report_timeout(topsync_barrier_t *b, unsigned rank)
{
    unsigned shown[16];
    int missing = topsync_barrier_missing(b, rank, shown, 16);
    uint32_t episode = atomic_load_explicit(&ts_rank_line(b, rank, 0)->value,
                                            memory_order_relaxed);
    const char *source = b->timeout_from_env ? "TOPSYNC_TIMEOUT" : "options.timeout_seconds";
    if (missing > 0 && b->ranks_by_arrival) /* a rank drawn by arrival names no thread */
        return ts_fail(ETIMEDOUT, "a barrier wait lasted more than %g s (%s) in episode %u: "
                       "%d of %u threads %s not arrived", b->timeout_seconds, source, episode,
                       missing, b->n, missing == 1 ? "has" : "have");
    char list[256] = "";
    size_t len = 0;
    for (int i = 0; i < missing && i < 16; i++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%u", i ? ", " : "", shown[i]);
    if (missing > 16)
        snprintf(list + len, sizeof list - len, ", ... (%d in all)", missing);
    if (missing <= 0) {
        /* Everybody entered this episode, yet my release never came: the
         * participant that releases me arrived and then stopped (killed?) */
        int from = b->algo->releaser ? b->algo->releaser(b, rank) : -1;
        if (from >= 0)
            snprintf(list, sizeof list, "none; all arrived, but participant %d, which "
                                        "releases participant %u, did not release it "
                                        "(stopped or killed after arriving?)", from, rank);
        else
            snprintf(list, sizeof list, "none; all arrived, but the release did not reach "
                                        "participant %u (one of them stopped or was killed "
                                        "after arriving?)", rank);
    }
    return ts_fail(ETIMEDOUT, "topsync_barrier_wait: participant %u waited more than %g s "
                              "(%s) in episode %u; participant(s) not arrived: %s",
                   rank, b->timeout_seconds, source, episode, list);
}

/* The -ECANCELED message: the idle hook gave up. */
static int report_cancel(topsync_barrier_t *b, unsigned rank)
{
    unsigned shown[1];
    int missing = topsync_barrier_missing(b, rank, shown, 1);
    return ts_fail(ECANCELED, "topsync_barrier_wait: participant %u abandoned its wait (the idle "
                              "hook asked to), %d participant(s) not arrived",
                   rank, missing > 0 ? missing : 0);
}

/* The algorithm's wait, with ts_wait_slow's timeout or idle hook unwinding
 * to here. */
static int wait_with_timeout(topsync_barrier_t *b, unsigned rank, uint32_t episode)
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
        return why == TS_UNWIND_IDLE ? report_cancel(b, rank) : report_timeout(b, rank);
    }
    ts_timeout_target = &env;
    b->algo->wait(b, rank, episode);
    ts_timeout_target = outer;
    return 0;
}

void topsync_barrier_wait(topsync_barrier_t *b, unsigned rank)
{
    if (__builtin_expect(!handle_live(b) || rank >= b->n, 0)) {
        if (!handle_live(b))
            dead_handle("topsync_barrier_wait", b);
        else
            ts_fail(EINVAL, "topsync_barrier_wait: rank %u out of range (%u participants)", rank,
                    b->n);
        fprintf(stderr, "topsync: %s\n", topsync_error_message());
        abort();
    }
    uint32_t episode = enter_episode(b, rank);
    if (__builtin_expect(b->armed, 0)) {
        if (wait_with_timeout(b, rank, episode) < 0) {
            fprintf(stderr, "topsync: %s\n", topsync_error_message());
            abort();
        }
        return;
    }
    b->algo->wait(b, rank, episode);
}

int topsync_barrier_wait_checked(topsync_barrier_t *b, unsigned rank)
{
    if (!handle_live(b))
        return dead_handle("topsync_barrier_wait", b);
    if (rank >= b->n)
        return ts_fail(EINVAL, "topsync_barrier_wait: rank %u out of range (%u participants)",
                       rank, b->n);
    uint32_t episode = enter_episode(b, rank);
    if (b->armed)
        return wait_with_timeout(b, rank, episode);
    b->algo->wait(b, rank, episode);
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

const char *topsync_barrier_wait_policy_name(const topsync_barrier_t *b)
{
    if (!b)
        return "";
    switch (b->wait.kind) {
    case TS_WAIT_SPIN: return "spin";
    case TS_WAIT_YIELD: return "yield";
    case TS_WAIT_BLOCK: return "block";
    }
    return "?";
}

unsigned topsync_barrier_nparticipants(const topsync_barrier_t *b)
{
    return b ? b->n : 0;
}

const topsync_groups_t *topsync_barrier_groups(const topsync_barrier_t *b)
{
    return b ? b->groups : NULL;
}
