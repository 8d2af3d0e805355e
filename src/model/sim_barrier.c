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
#include "barrier/setup.h"
#include "base/error.h"
#include "model/model_private.h"
#include "model/sim_engine.h"
#include "wait/wait.h"

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
#define SIM_MAX_RUN_MS 1e6
/* a warm-up or run whose end a run in time (run_ps) has not decided yet */
#define UNDECIDED (UINT64_MAX / 2)

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
    uint64_t warmup, total; /* the last warm-up episode and the last episode */
    /* a run in time (--run-ms): warm-up and timed part last at least
     * warm_ps and run_ps of virtual time and min_warmup and min_episodes
     * episodes; timed_from: the earliest entry into the first timed one */
    ts_ps warm_ps, run_ps, timed_from;
    uint64_t min_warmup, min_episodes;
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

/* A run in time: the first participant to leave an episode e once the
 * warm-up's (then the run's) time and episodes are done makes e + 1 the
 * warm-up's (the run's) last episode. Every participant then runs the same
 * episodes: nobody can have entered e + 2 yet, for that waits for this
 * participant's arrival in e + 1, and those in e + 1 read the new end
 * when they leave it. */
static void pace(struct run *r, uint64_t e)
{
    ts_ps now = ts_sim_now();
    if (r->warmup == UNDECIDED) {
        if (e >= r->min_warmup && (now >= r->warm_ps || e >= SIM_MAX_EPISODES))
            r->warmup = e + 1;
        return;
    }
    uint64_t timed = e + 1 - r->warmup; /* the timed episodes, e + 1 the last */
    if (r->total == UNDECIDED && e > r->warmup && timed >= r->min_episodes &&
        (now - r->timed_from >= r->run_ps || timed >= SIM_MAX_EPISODES))
        r->total = e + 1;
}

static void body(unsigned rank, void *arg)
{
    struct run *r = arg;
    for (uint64_t e = 1; e <= r->total; e++) {
        if (e == r->warmup + 1) {
            r->first[rank] = ts_sim_now();
            if (r->first[rank] < r->timed_from)
                r->timed_from = r->first[rank];
        }
        enter(r, rank, e);
        topsync_barrier_wait(r->b, rank);
        leave(r, rank, e);
        if (r->run_ps)
            pace(r, e);
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

/* The timer tick, which ends a slice and bounds a sleeper's lag (0 in
 * the options): CONFIG_HZ=250, Debian's kernels' (and this VM's: tick_hz
 * of topsync-bench-sched-costs). Other kernels take 100, 300 or 1000 (the
 * choices of kernel/Kconfig.hz); the options may give any HZ from 10 to
 * 10000. */
#define SCHED_TICK_NS 4000000.0
#define SIM_TICK_LEAST_NS 1e5
#define SIM_TICK_MOST_NS 1e8

static int check_options(const topsync_model_t *m, unsigned n, const hwloc_const_bitmap_t *sets,
                         const topsync_sim_options_t *o, unsigned *pu, bool *shared)
{
    *shared = false;
    const double costs[] = {o->slice_ns,
                            o->switch_ns,
                            o->wake_call_ns,
                            o->wake_latency_ns,
                            o->wake_latency_busy_ns,
                            o->yield_ns,
                            o->sleep_cpu_ns,
                            o->create_ns,
                            o->wake_call_local_ns,
                            o->pause_ns};
    for (size_t i = 0; i < sizeof costs / sizeof *costs; i++)
        if (!(costs[i] >= 0 && costs[i] < 1e12))
            return ts_fail(EINVAL,
                           "simulation: a scheduler cost of %g ns; valid: 0 (the "
                           "default) to 1e12",
                           costs[i]);
    if (o->tick_ns != 0 && !(o->tick_ns >= SIM_TICK_LEAST_NS && o->tick_ns <= SIM_TICK_MOST_NS))
        return ts_fail(EINVAL,
                       "simulation: a timer tick of %g ns; valid: 0 (the default, %.0f) or "
                       "%.0f to %.0f (CONFIG_HZ 10000 to 10)",
                       o->tick_ns, SCHED_TICK_NS, SIM_TICK_LEAST_NS, SIM_TICK_MOST_NS);
    if (o->scheduler != TOPSYNC_SIM_SCHED_EEVDF && o->scheduler != TOPSYNC_SIM_SCHED_CFS)
        return ts_fail(EINVAL,
                       "simulation: scheduler %d; valid: TOPSYNC_SIM_SCHED_EEVDF (%d), "
                       "TOPSYNC_SIM_SCHED_CFS (%d)",
                       (int)o->scheduler, (int)TOPSYNC_SIM_SCHED_EEVDF, (int)TOPSYNC_SIM_SCHED_CFS);
    if (o->noise > SIM_MAX_PARTICIPANTS)
        return ts_fail(EINVAL, "simulation: %u busy neighbours; valid: up to %u", o->noise,
                       SIM_MAX_PARTICIPANTS);
    if (n == 0 || n > SIM_MAX_PARTICIPANTS)
        return ts_fail(EINVAL, "simulation: %u participants; valid: 1 to %u", n,
                       SIM_MAX_PARTICIPANTS);
    if (!(o->run_ms >= 0 && o->run_ms <= SIM_MAX_RUN_MS))
        return ts_fail(EINVAL, "simulation: a run of %g ms; valid: 0 (episodes decide) to %g",
                       o->run_ms, SIM_MAX_RUN_MS);
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
    if (o->noise_on) {
        unsigned long placed = 0;
        for (unsigned k = 0; k < o->noise_on_count; k++) {
            if (o->noise_on[k] && (k >= m->pu_limit || !ts_model_has_pu(m, k)))
                return ts_fail(EINVAL,
                               "simulation: %u busy neighbours on PU %u, which the model's "
                               "topology does not have",
                               o->noise_on[k], k);
            placed += o->noise_on[k];
        }
        if (placed != o->noise)
            return ts_fail(EINVAL,
                           "simulation: noise_on places %lu busy neighbours where noise is %u",
                           placed, o->noise);
    }
    if (o->start_on) {
        if (!o->unbound || o->start_on_count != n)
            return ts_fail(EINVAL,
                           "simulation: start_on gives %u PU%s; valid: one per participant "
                           "(%u), unbound",
                           o->start_on_count, o->start_on_count == 1 ? "" : "s", n);
        for (unsigned r = 0; r < n; r++)
            if (o->start_on[r] >= m->pu_limit || !ts_model_has_pu(m, o->start_on[r]))
                return ts_fail(EINVAL,
                               "simulation: participant %u starts on PU %u, which the model's "
                               "topology does not have",
                               r, o->start_on[r]);
    }
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
        else {
            *shared |= hwloc_bitmap_isset(used, (unsigned)first);
            hwloc_bitmap_set(used, (unsigned)first);
            pu[i] = (unsigned)first;
        }
    }
    hwloc_bitmap_free(used);
    return rc;
}

/* The scheduler's costs when the options leave them 0 (docs/model.md
 * section 9): measured on the development VM (2 vCPUs, KVM, Linux 6.18) by
 * topsync-bench-sched-costs, medians of five runs' medians (2000 rounds;
 * 500 for the wake-ups), the five runs' range beside. Not fitted to any
 * barrier figure. */
#define SCHED_SWITCH_NS 1802.0             /* 1742-1817 */
#define SCHED_WAKE_CALL_NS 9555.0          /* 9314-9614 (9073-9148 onto a busy CPU) */
#define SCHED_WAKE_LATENCY_NS 28708.0      /* 23851-29504 */
#define SCHED_WAKE_LATENCY_BUSY_NS 15939.0 /* 15794-16054 */
#define SCHED_YIELD_NS 421.0               /* 410-441 */
/* sleep_cpu_ns: measured later (2026-11-28, five runs), on a day the VM
 * was faster than for the others (its wake call 7130 ns) */
#define SCHED_SLEEP_CPU_NS 10344.0 /* 9348-11780 */
/* wake_call_local_ns: a FUTEX_WAKE of a sleeper of the waker's own CPU
 * (futex_wake_same_cpu_ns; measured 2026-11-28, five runs) */
#define SCHED_WAKE_CALL_LOCAL_NS 811.0 /* 801-821 */
/* create_ns: one pthread_create of a loop making threads that wait (the
 * participants' creation; measured 2026-11-28, five runs) */
#define SCHED_CREATE_NS 12884.0 /* 12619-13200 */
/* pause_ns: one ts_cpu_relax (x86 PAUSE) as wait/pause_cost.c measures it,
 * the least of 5 timed runs of 2048 (2026-11-29, 16 measurements on the
 * development VM's AMD EPYC: 22.93-22.99) */
#define SIM_PAUSE_NS 23.0
/* the creation's phase is drawn from the seed mixed with this, so that it
 * is not the noise's slice phase (sim_sched.c) drawn again */
#define CREATE_PHASE_SALT 0x6372656174650000ull

struct sched_plan {
    struct ts_sched_config config;
    unsigned *noise; /* [pu_limit] */
    unsigned *cpu;   /* [n] */
};

static ts_ps cost_ps(double option_ns, double default_ns)
{
    return (ts_ps)((option_ns > 0 ? option_ns : default_ns) * 1000.0 + 0.5);
}

/* The model's first PU at or after OS index os, in turn. */
static unsigned pu_from(const topsync_model_t *m, unsigned os)
{
    while (!ts_model_has_pu(m, os))
        os = (os + 1) % m->pu_limit;
    return os;
}

/* The model's PUs. */
static unsigned model_pus(const topsync_model_t *m)
{
    unsigned npus = 0;
    for (unsigned os = 0; os < m->pu_limit; os++)
        npus += ts_model_has_pu(m, os);
    return npus;
}

/* The scheduler's CPUs are the model's PUs by OS index; busy neighbours
 * go to them in turn, and so do unbound participants, unless the options
 * say where each starts (noise_on, start_on: checked by check_options). */
static int plan_scheduler(const topsync_model_t *m, unsigned n, const topsync_sim_options_t *o,
                          const unsigned *pu, struct sched_plan *plan)
{
    unsigned npus = model_pus(m);
    plan->noise = calloc(m->pu_limit, sizeof *plan->noise);
    plan->cpu = calloc(n, sizeof *plan->cpu);
    if (!plan->noise || !plan->cpu || !npus) {
        free(plan->noise);
        free(plan->cpu);
        plan->noise = plan->cpu = NULL;
        return ts_fail(ENOMEM, "out of memory");
    }
    if (o->noise_on)
        for (unsigned k = 0; k < o->noise_on_count && k < m->pu_limit; k++)
            plan->noise[k] = o->noise_on[k];
    else
        for (unsigned j = 0, os = 0; j < o->noise; j++, os = (os + 1) % m->pu_limit)
            plan->noise[os = pu_from(m, os)]++;
    for (unsigned r = 0, os = 0; r < n; r++, os = (os + 1) % m->pu_limit)
        plan->cpu[r] = !o->unbound ? pu[r] : o->start_on ? o->start_on[r] : (os = pu_from(m, os));
    ts_ps tick = cost_ps(o->tick_ns, SCHED_TICK_NS);
    plan->config = (struct ts_sched_config){
        .ncpus = m->pu_limit,
        .noise = plan->noise,
        .cpu = plan->cpu,
        .nprocs = n,
        .unbound = o->unbound,
        .slice = cost_ps(o->slice_ns, (double)ts_wait_slice_ns(npus)),
        .switch_cost = cost_ps(o->switch_ns, SCHED_SWITCH_NS),
        .wake_call = cost_ps(o->wake_call_ns, SCHED_WAKE_CALL_NS),
        .wake_call_local = cost_ps(o->wake_call_local_ns, SCHED_WAKE_CALL_LOCAL_NS),
        .wake_latency = cost_ps(o->wake_latency_ns, SCHED_WAKE_LATENCY_NS),
        .wake_latency_busy = cost_ps(o->wake_latency_busy_ns, SCHED_WAKE_LATENCY_BUSY_NS),
        .yield_cost = cost_ps(o->yield_ns, SCHED_YIELD_NS),
        .sleep_cpu = cost_ps(o->sleep_cpu_ns, SCHED_SLEEP_CPU_NS),
        .tick = tick,
        .create_every = cost_ps(o->create_ns, SCHED_CREATE_NS),
        /* the program starts at no particular point of the tick */
        .create_first = 1 + (ts_ps)(ts_splitmix_mix(o->seed ^ CREATE_PHASE_SALT) % (uint64_t)tick),
        .balance = true,
        .cfs = o->scheduler == TOPSYNC_SIM_SCHED_CFS,
        .seed = o->seed,
    };
    return 0;
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
    bool shared;
    rc = check_options(m, n, sets, opts, pu, &shared);
    if (rc < 0) {
        free(pu);
        return rc;
    }
    /* glibc's pthread_barrier_wait, as a peer (docs/model.md section 9):
     * one arrival counter, waiters that go to the futex at once and a last
     * arriver that wakes them all: the central counter's code with no spin
     * and a sleep, always under the scheduler (its cost is the sleeps) */
    bool glibc = algorithm && !strcmp(algorithm, TOPSYNC_SIM_PEER_GLIBC);
    struct sched_plan plan = {0};
    if (opts->noise || opts->unbound || shared || glibc) {
        rc = plan_scheduler(m, n, opts, pu, &plan);
        if (rc < 0) {
            free(pu);
            return rc;
        }
    }

    topsync_barrier_options_t bo;
    topsync_barrier_options_init(&bo);
    bo.algorithm = glibc ? "sense-reversing" : algorithm ? algorithm : "auto";
    bo.wait = glibc                                ? TOPSYNC_WAIT_BLOCK
              : opts->wait == TOPSYNC_WAIT_DEFAULT ? TOPSYNC_WAIT_SPIN
                                                   : opts->wait;
    bo.topology = m->topology;
    bo.cpusets = sets;
    bo.line_size = opts->line_size ? opts->line_size : topsync_topology_line_size(m->topology);
    bo.timeout_seconds = -1; /* virtual time: no clock may cut a wait short */
    struct run r = {.n = n};
    /* The library's settings and its spin's conversions take the simulated
     * machine's facts, not this one's: its pause and its online PUs (the
     * slice a learned spin may grow to), on this thread, which runs every
     * participant, until the simulation ends. */
    double pause_before = ts_wait_pause_ns_fix(opts->pause_ns > 0 ? opts->pause_ns : SIM_PAUSE_NS);
    unsigned cpus_before = ts_barrier_machine_online_cpus_fix(model_pus(m));
    rc = ts_barrier_create_with(&r.b, n, &bo, sim_algorithms, m);
    if (rc < 0)
        goto out;
    uint64_t episodes = opts->episodes ? opts->episodes : 1000;
    r.warmup = opts->warmup ? opts->warmup : (episodes / 10 ? episodes / 10 : 1);
    r.total = r.warmup + episodes;
    r.timed_from = INT64_MAX;
    if (opts->run_ms > 0) {
        r.run_ps = (ts_ps)(opts->run_ms * 1e9 + 0.5);
        r.warm_ps = r.run_ps / 10;
        r.min_warmup = r.warmup;
        r.min_episodes = episodes;
        r.warmup = r.total = UNDECIDED;
    }
    r.first = calloc(n, sizeof *r.first);
    r.last = calloc(n, sizeof *r.last);
    r.entered = calloc(n, sizeof *r.entered);
    r.left = calloc(n, sizeof *r.left);
    snprintf(res->resolved, sizeof res->resolved, "%s",
             glibc ? "glibc (modelled)" : topsync_barrier_algorithm(r.b));
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
        .sched = plan.noise ? &plan.config : NULL,
        .no_spin = glibc,
    };
    res->mlp = cfg.mlp;
    struct ts_sim_stats stats;
    rc = ts_sim_run(&cfg, &stats);
    if (rc < 0)
        goto out;
    res->events = stats.events;
    res->sleeps = stats.sched.sleeps;
    res->wakeups = stats.sched.wakeups;
    res->switches = stats.sched.switches;
    res->migrations = stats.sched.migrations;
    res->runqueue_wait_ns =
        stats.sched.runs ? (double)stats.sched.runqueue_wait / 1e3 / (double)stats.sched.runs : 0;
    ts_ps crowd_total = 0;
    for (unsigned i = 0; i <= TOPSYNC_SIM_CROWD_MAX; i++)
        crowd_total += stats.sched.crowd_time[i];
    for (unsigned i = 0; crowd_total && i <= TOPSYNC_SIM_CROWD_MAX; i++)
        res->crowd_share[i] = (double)stats.sched.crowd_time[i] / (double)crowd_total;
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
    episodes = r.total - r.warmup;
    res->episodes = episodes;
    res->latency_ns = (double)slowest / 1000.0 / (double)episodes;
    res->fastest_ns = (double)fastest / 1000.0 / (double)episodes;
out:
    topsync_barrier_destroy(r.b);
    ts_wait_pause_ns_fix(pause_before);
    ts_barrier_machine_online_cpus_fix(cpus_before);
    free(r.first);
    free(r.last);
    free(r.entered);
    free(r.left);
    free(pu);
    free(plan.noise);
    free(plan.cpu);
    return rc;
}
