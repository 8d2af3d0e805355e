/*
 * The OS scheduler of the simulation (docs/model.md section 9): which task
 * each CPU runs, in virtual time, under the participants' events.
 *
 * Evaluated lazily: a CPU's state is brought up to a time t only when the
 * engine asks about t, which is then the earliest time of the whole
 * simulation, so every wake-up and wait before t is known. Between two
 * questions nothing about the CPU changes but what its own slices and
 * spins decide, which advance() replays in order. The periodic balancer
 * (balance()) moves tasks between CPUs at its turns, which
 * ts_sched_settle() takes when the engine knows t is the earliest.
 * The why: docs/design.md section 8.15 and docs/model.md section 9.
 */
#include "model/sim_sched.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

#define NEVER INT64_MAX

/* Linux's per-entity load tracking (PELT, kernel/sched/pelt.c): a task's
 * load is its runnable share of the recent past, each millisecond's
 * weight halving every LOAD_AVG_PERIOD, 32 ms: per microsecond, a decay
 * of 2^(-1/32000). Counted in whole microseconds, without libm (the
 * library links nothing but hwloc and pthreads). */
#define PELT_DECAY_PER_US 0.999978339385202
#define US_PS ((ts_ps)1000000)
/* wake_affine_weight's bias towards the wakee's previous CPU: its load
 * counts 100 + (imbalance_pct - 100) / 2 percent, imbalance_pct 117 in
 * every domain above SMT (kernel/sched/topology.c, sd_init). */
#define AFFINE_PREV_BIAS 1.08

enum state {
    NEW,     /* not created yet: on no CPU (create_first, create_every) */
    RUN,     /* runnable, acting */
    SPIN,    /* waiting, spinning while it holds its CPU */
    YIELDER, /* waiting, spin spent: runnable, but gives way to any other */
    SLEEP,   /* waiting in the kernel: not runnable */
    DONE,
};

enum holder { IDLE, PROC, NOISE };

struct sproc {
    unsigned cpu;
    int next; /* the next participant of its CPU, -1: none */
    enum state state;
    enum ts_sched_then then;
    ts_ps vruntime;  /* CPU time received (equal weights: EEVDF's virtual time) */
    ts_ps deadline;  /* EEVDF's virtual deadline: its slice is spent when vruntime reaches it */
    ts_ps spin_left; /* SPIN: CPU time its spin has left */
    ts_ps spin_from; /* SPIN and holding: since when the hold counts */
    ts_ps spin_out;  /* when its current wait's spin ran out; -1: it has not */
    ts_ps ready_at;  /* woken: runnable from then */
    ts_ps lag;       /* asleep: the CPU's mean virtual time minus its own */
    bool pending;    /* woken: its arrival not yet weighed against the running task */
    bool initial;    /* created, not yet placed: half a slice to its first deadline */
    /* asleep, and still on its CPU's run queue, competing: it slept while
     * not eligible (DELAY_DEQUEUE: go_to_sleep() below) */
    bool delayed;
    double load;    /* its PELT load (0..1, a nice-0 task's weight as 1) */
    ts_ps load_at;  /* as of then */
    ts_ps last_ran; /* when it last left its CPU (the balancer's cache heat) */
};

struct scpu {
    enum holder kind;
    unsigned holder;   /* a participant, or a noise task of this CPU */
    ts_ps since;       /* the holder's time is counted from then */
    ts_ps protect_end; /* its slice is spent then (its virtual deadline reached) */
    ts_ps slice_end;   /* the tick that then takes the CPU from it */
    int first;         /* its participants (sproc.next), -1: none */
    unsigned nnoise;
    ts_ps *noise_vruntime; /* [nnoise]; room for every noise task (they move) */
    ts_ps *noise_deadline; /* their virtual deadlines */
    ts_ps *noise_last_ran; /* when each last left the CPU */
    /* the periodic balancer (balance()): its next turn, its interval in
     * milliseconds (sd->balance_interval) and the failed turns in a row */
    ts_ps next_balance;
    unsigned interval_ms, failed;
    /* CFS only: its min_vruntime, and when the holder was last chosen */
    ts_ps min_vruntime, picked_at;
};

struct ts_sched {
    struct ts_sched_config c;
    struct sproc *procs;
    struct scpu *cpus;
    struct ts_sched_stats stats;
    ts_ps next_balance; /* the earliest of the CPUs' next_balance */
    /* stats.crowd_time is counted up to crowd_since; crowd_over: a
     * participant has returned, the count has ended; crowd_on: [ncpus],
     * room to count the participants on each CPU */
    ts_ps crowd_since;
    bool crowd_over;
    unsigned *crowd_on;
};

static ts_ps max_ps(ts_ps a, ts_ps b)
{
    return a > b ? a : b;
}

/* The virtual time of CPU k's running task (not IDLE), and its deadline. */
static ts_ps *holder_vruntime(struct ts_sched *s, struct scpu *cpu)
{
    return cpu->kind == PROC ? &s->procs[cpu->holder].vruntime : &cpu->noise_vruntime[cpu->holder];
}

static ts_ps *holder_deadline(struct ts_sched *s, struct scpu *cpu)
{
    return cpu->kind == PROC ? &s->procs[cpu->holder].deadline : &cpu->noise_deadline[cpu->holder];
}

/*
 * CFS, as Linux chose before 6.6 (kernel/sched/fair.c of 6.5; docs/
 * model.md section 9, "CFS"): the runnable task of least virtual time
 * runs, for its share of a period, until a tick finds that share spent
 * (check_preempt_tick); a woken task preempts only a holder ahead of it
 * by more than the wake-up granularity (wakeup_preempt_entity), and it
 * is placed at most half a latency behind the CPU's min_vruntime
 * (GENTLE_FAIR_SLEEPERS), a new task a share ahead of it (START_DEBIT).
 * The three tunables scale with the CPUs as EEVDF's slice does
 * (SCHED_TUNABLESCALING_LOG, 1 + log2 of at most 8 CPUs):
 * sysctl_sched_min_granularity 0.75 ms, the config's slice;
 * sysctl_sched_latency 6 ms, CFS_NR_LATENCY of them (sched_nr_latency);
 * sysctl_sched_wakeup_granularity 1 ms, 4/3 of one. Not modelled: the
 * second test of check_preempt_tick (a holder ahead of the leftmost by
 * more than its share, at least a granularity into its run), and the
 * buddies (a yielder gives way to any other task, as under EEVDF).
 */
#define CFS_NR_LATENCY 8

static ts_ps cfs_latency(const struct ts_sched *s)
{
    return CFS_NR_LATENCY * s->c.slice;
}

static ts_ps cfs_wakeup_gran(const struct ts_sched *s)
{
    return s->c.slice * 4 / 3;
}

/* The share of a period of each of nr runnable tasks (sched_slice, equal
 * weights): the period is the latency, or nr minimum granularities when
 * more than sched_nr_latency run. */
static ts_ps cfs_ideal(const struct ts_sched *s, unsigned nr)
{
    nr = nr ? nr : 1;
    ts_ps period = nr > CFS_NR_LATENCY ? (ts_ps)nr * s->c.slice : cfs_latency(s);
    return period / nr;
}

static unsigned nr_running(const struct ts_sched *s, unsigned k, ts_ps t);
static void pick(struct ts_sched *s, unsigned k, ts_ps at);

/* The first timer tick at or after t: the ticks of all CPUs fall together
 * (no sched_skew_tick), every `tick` from 0. */
static ts_ps tick_at_or_after(const struct ts_sched *s, ts_ps t)
{
    ts_ps tick = s->c.tick > 0 ? s->c.tick : 1;
    return (t + tick - 1) / tick * tick;
}

/* CFS: the holder chosen at cpu->picked_at keeps the CPU until the first
 * tick at or past its share of the tasks runnable at `now` (recomputed
 * when they change, as each tick recomputes it). */
static void cfs_reslice(struct ts_sched *s, struct scpu *cpu, ts_ps now)
{
    cpu->protect_end = cpu->picked_at + cfs_ideal(s, nr_running(s, (unsigned)(cpu - s->cpus), now));
    cpu->slice_end = tick_at_or_after(s, max_ps(cpu->protect_end, now));
}

/* CFS's test of a task that joined CPU k at `at` (check_preempt_wakeup of
 * 6.5): the holder, at virtual time `running`, gives way only when ahead
 * of the newcomer's `least` by more than the wake-up granularity; else it
 * runs on, its share recomputed for the tasks now runnable. */
static void cfs_preempt_or_reslice(struct ts_sched *s, unsigned k, ts_ps running, ts_ps least,
                                   ts_ps at)
{
    if (running - least > cfs_wakeup_gran(s))
        pick(s, k, at);
    else
        cfs_reslice(s, &s->cpus[k], at);
}

/* The holder, its time counted until `from`, runs from then: protected
 * until its virtual time reaches its deadline (EEVDF's RUN_TO_PARITY:
 * set_protect_slice takes the deadline as it is at the pick, and only
 * update_deadline moves it, when it is reached; a task given its CPU
 * back after a wake-up took it keeps what was left of its slice, no new
 * one), and ended by the first timer tick after that. Linux checks a
 * running task's slice only when its time is counted (update_curr: at
 * each tick, and when a task of its CPU sleeps or wakes). */
static void start_slice(struct ts_sched *s, struct scpu *cpu, ts_ps from)
{
    if (s->c.cfs) {
        cpu->picked_at = from;
        cfs_reslice(s, cpu, from);
        return;
    }
    ts_ps left = *holder_deadline(s, cpu) - *holder_vruntime(s, cpu);
    cpu->protect_end = from + (left > 0 ? left : 0);
    cpu->slice_end = tick_at_or_after(s, cpu->protect_end);
}

/* On its CPU's run queue (running, or able to): what PELT counts. */
static bool runnable(const struct sproc *q)
{
    return q->state == RUN || q->state == SPIN || q->state == YIELDER;
}

/* CFS's min_vruntime of CPU k (update_min_vruntime): the least virtual
 * time of its runnable tasks (the holder's counted until cpu->since),
 * participant `except` left out; it never decreases, and a CPU with none
 * keeps its last. */
static ts_ps cfs_min_vruntime(struct ts_sched *s, unsigned k, int except)
{
    struct scpu *cpu = &s->cpus[k];
    ts_ps least = NEVER;
    for (unsigned j = 0; j < cpu->nnoise; j++)
        if (cpu->noise_vruntime[j] < least)
            least = cpu->noise_vruntime[j];
    for (int p = cpu->first; p >= 0; p = s->procs[p].next) {
        const struct sproc *q = &s->procs[p];
        if (p != except && runnable(q) && !q->pending && q->vruntime < least)
            least = q->vruntime;
    }
    if (least != NEVER && least > cpu->min_vruntime)
        cpu->min_vruntime = least;
    return cpu->min_vruntime;
}

/* PELT_DECAY_PER_US to the power us, by squaring. */
static double pelt_decay(uint64_t us)
{
    double y = 1.0, base = PELT_DECAY_PER_US;
    for (; us; us >>= 1, base *= base)
        if (us & 1)
            y *= base;
    return y;
}

/* q's load at t (the whole microseconds since its load_at), its state
 * unchanged since then. */
static double load_at(const struct sproc *q, ts_ps t)
{
    if (t <= q->load_at)
        return q->load;
    double y = pelt_decay((uint64_t)((t - q->load_at) / US_PS));
    /* a delayed sleeper is still on its run queue, and PELT counts its
     * load as a queued task's (se->on_rq) */
    return q->load * y + (runnable(q) || q->delayed ? 1 - y : 0);
}

/* Bring q's load to t: before each change of whether it is runnable. Its
 * load_at moves by whole microseconds, so that no fraction is lost. */
static void load_update(struct sproc *q, ts_ps t)
{
    q->load = load_at(q, t);
    if (t > q->load_at)
        q->load_at += (t - q->load_at) / US_PS * US_PS;
}

/* Before a participant changes CPU, or the first returns, at t: the time
 * since the last such change is counted to the crowd of the placement
 * that ends (stats.crowd_time), once every participant exists. */
static void crowd_count(struct ts_sched *s, ts_ps t)
{
    ts_ps from = max_ps(s->crowd_since, ts_sched_created(s, s->c.nprocs - 1));
    if (s->crowd_over || t <= from)
        return;
    unsigned most = 0;
    memset(s->crowd_on, 0, s->c.ncpus * sizeof *s->crowd_on);
    for (unsigned p = 0; p < s->c.nprocs; p++)
        if (++s->crowd_on[s->procs[p].cpu] > most)
            most = s->crowd_on[s->procs[p].cpu];
    s->stats.crowd_time[most < TOPSYNC_SIM_CROWD_MAX ? most : TOPSYNC_SIM_CROWD_MAX] += t - from;
    s->crowd_since = t;
}

static void link_proc(struct ts_sched *s, unsigned p, unsigned cpu)
{
    s->procs[p].cpu = cpu;
    s->procs[p].next = s->cpus[cpu].first;
    s->cpus[cpu].first = (int)p;
}

static void unlink_proc(struct ts_sched *s, unsigned p)
{
    for (int *at = &s->cpus[s->procs[p].cpu].first; *at >= 0; at = &s->procs[*at].next)
        if (*at == (int)p) {
            *at = s->procs[p].next;
            return;
        }
}

/* The periodic balancer's interval on a CPU (get_sd_balance_interval):
 * its balance_interval, in milliseconds, times busy_factor when the CPU
 * runs something, in jiffies (rounded up, msecs_to_jiffies), one jiffy
 * less when busy (so that domains do not balance in step), at least one
 * and at most max_load_balance_interval, HZ x CPUs / 10 jiffies. */
#define BALANCE_BUSY_FACTOR 16 /* sd_init */
static ts_ps balance_interval(const struct ts_sched *s, const struct scpu *cpu, bool busy)
{
    ts_ps tick = s->c.tick > 0 ? s->c.tick : 1;
    int64_t ms = (int64_t)cpu->interval_ms * (busy ? BALANCE_BUSY_FACTOR : 1);
    int64_t jiffies = (ms * 1000000000 + tick - 1) / tick - (busy ? 1 : 0);
    int64_t most = (int64_t)1000000000000 / tick * s->c.ncpus / 10;
    jiffies = jiffies < 1 ? 1 : jiffies > most ? most : jiffies;
    return jiffies * tick;
}

/* Where CPU k's first slice (or CFS share) of `length` ends: at a phase
 * drawn from the seed, in (0, length]. The CPUs' slices are not in step:
 * each CPU's history is its own. */
static ts_ps first_slice_end(const struct ts_sched_config *c, unsigned k, ts_ps length)
{
    uint64_t z = ts_splitmix_mix(c->seed + TS_SPLITMIX_STEP * (k + 1));
    return 1 + (ts_ps)(z % (uint64_t)length);
}

int ts_sched_create(struct ts_sched **out, const struct ts_sched_config *c)
{
    *out = NULL;
    if (!c->ncpus || !c->nprocs || c->slice <= 0)
        return ts_fail(EINVAL, "simulation: a scheduler needs CPUs, participants and a slice");
    struct ts_sched *s = calloc(1, sizeof *s);
    if (!s)
        return ts_fail(ENOMEM, "out of memory");
    s->c = *c;
    s->procs = calloc(c->nprocs, sizeof *s->procs);
    s->cpus = calloc(c->ncpus, sizeof *s->cpus);
    s->crowd_on = calloc(c->ncpus, sizeof *s->crowd_on);
    if (!s->procs || !s->cpus || !s->crowd_on) {
        ts_sched_destroy(s);
        return ts_fail(ENOMEM, "out of memory");
    }
    unsigned all_noise = 0;
    for (unsigned k = 0; c->noise && k < c->ncpus; k++)
        all_noise += c->noise[k];
    for (unsigned k = 0; k < c->ncpus; k++) {
        struct scpu *cpu = &s->cpus[k];
        cpu->first = -1;
        cpu->slice_end = NEVER;
        cpu->nnoise = c->noise ? c->noise[k] : 0;
        cpu->interval_ms = c->ncpus; /* sd_init: balance_interval = sd_weight */
        cpu->next_balance = c->balance ? balance_interval(s, cpu, cpu->nnoise > 0) : NEVER;
        if (all_noise && (!(cpu->noise_vruntime = calloc(all_noise, sizeof(ts_ps))) ||
                          !(cpu->noise_deadline = calloc(all_noise, sizeof(ts_ps))) ||
                          !(cpu->noise_last_ran = calloc(all_noise, sizeof(ts_ps))))) {
            ts_sched_destroy(s);
            return ts_fail(ENOMEM, "out of memory");
        }
        if (cpu->nnoise) {
            /* a busy neighbour runs from the start, its first slice
             * ending at the CPU's own phase */
            for (unsigned j = 0; j < cpu->nnoise; j++)
                cpu->noise_deadline[j] = c->slice;
            cpu->noise_deadline[0] = first_slice_end(c, k, c->slice);
            cpu->kind = NOISE;
            cpu->holder = 0;
            cpu->since = 0;
            start_slice(s, cpu, 0);
        }
    }
    bool created = c->create_first || c->create_every;
    for (unsigned p = c->nprocs; p-- > 0;) {
        s->procs[p].load = 1.0;          /* a new task's (init_entity_runnable_average) */
        s->procs[p].deadline = c->slice; /* there from the start: a slice to run */
        if (c->cpu[p] >= c->ncpus) {
            ts_sched_destroy(s);
            return ts_fail(EINVAL, "simulation: participant %u on CPU %u of %u", p, c->cpu[p],
                           c->ncpus);
        }
        if (created) { /* on no CPU's list until created (create()) */
            s->procs[p].state = NEW;
            s->procs[p].cpu = c->cpu[p];
        } else {
            s->procs[p].state = RUN;
            link_proc(s, p, c->cpu[p]);
        }
    }
    for (unsigned k = 0; c->cfs && k < c->ncpus; k++) {
        /* CFS: each busy CPU's first share ends at a phase drawn as above */
        struct scpu *cpu = &s->cpus[k];
        if (!cpu->nnoise)
            continue;
        ts_ps share = cfs_ideal(s, nr_running(s, k, 0));
        cpu->picked_at = first_slice_end(c, k, share) - share;
        cfs_reslice(s, cpu, 0);
    }
    s->next_balance = NEVER;
    for (unsigned k = 0; k < c->ncpus; k++)
        if (s->cpus[k].next_balance < s->next_balance)
            s->next_balance = s->cpus[k].next_balance;
    *out = s;
    return 0;
}

void ts_sched_destroy(struct ts_sched *s)
{
    if (!s)
        return;
    if (s->cpus)
        for (unsigned k = 0; k < s->c.ncpus; k++) {
            free(s->cpus[k].noise_vruntime);
            free(s->cpus[k].noise_deadline);
            free(s->cpus[k].noise_last_ran);
        }
    free(s->cpus);
    free(s->procs);
    free(s->crowd_on);
    free(s);
}

void ts_sched_stats(const struct ts_sched *s, struct ts_sched_stats *out)
{
    *out = s->stats;
}

/* The holder's virtual time grows by the CPU time it had until `at`. */
static void charge(struct ts_sched *s, struct scpu *cpu, ts_ps at)
{
    if (cpu->kind == IDLE || at <= cpu->since)
        return;
    *holder_vruntime(s, cpu) += at - cpu->since;
}

/* A waiter whose spin ends (in sleep or yields), and when it ends: its
 * spin's rest counted from when it holds the CPU. */
static bool spin_bounded(const struct sproc *q)
{
    return q->state == SPIN && q->then != TS_SCHED_SPIN_ON;
}

static ts_ps spin_end(const struct sproc *q, const struct scpu *cpu)
{
    return max_ps(q->spin_from, cpu->since) + q->spin_left;
}

/* The holder's CPU time is counted until `at`, from where it goes on: its
 * virtual time grows, and a spinning holder's spin has that much less
 * left (else the spin would start again from `at`). */
static void account(struct ts_sched *s, struct scpu *cpu, ts_ps at)
{
    if (cpu->kind == IDLE || at <= cpu->since)
        return;
    charge(s, cpu, at);
    if (cpu->kind == PROC && spin_bounded(&s->procs[cpu->holder])) {
        struct sproc *q = &s->procs[cpu->holder];
        ts_ps from = max_ps(q->spin_from, cpu->since);
        if (at > from)
            q->spin_left = q->spin_left > at - from ? q->spin_left - (at - from) : 0;
        q->spin_from = at;
    }
    cpu->since = at;
}

/* The task of kind `kind`, `who`, leaves the CPU at `at`: the balancer
 * counts its cache as cold from then (task_hot). */
static void mark_left(struct ts_sched *s, struct scpu *cpu, enum holder kind, unsigned who,
                      ts_ps at)
{
    if (kind == PROC)
        s->procs[who].last_ran = at;
    else if (kind == NOISE)
        cpu->noise_last_ran[who] = at;
}

/* Participant p is given its CPU from `from`: its wait on the run queue
 * since it became runnable (its arrival, woken, or leaving the CPU
 * runnable) is counted, as schedstat counts a task's run delay. */
static void count_run(struct ts_sched *s, unsigned p, ts_ps from)
{
    const struct sproc *q = &s->procs[p];
    ts_ps runnable_since = max_ps(q->ready_at, q->last_ran);
    s->stats.runs++;
    if (from > runnable_since)
        s->stats.runqueue_wait += from - runnable_since;
}

/* The holder hands the CPU to participant p, who runs from `from` for a
 * slice (the holder counted until `at`, when it stops). */
static void hand_over(struct ts_sched *s, struct scpu *cpu, unsigned p, ts_ps at, ts_ps from)
{
    account(s, cpu, at);
    mark_left(s, cpu, cpu->kind, cpu->holder, at);
    cpu->kind = PROC;
    cpu->holder = p;
    cpu->since = from;
    count_run(s, p, from);
    start_slice(s, cpu, from);
    s->stats.switches++;
}

static bool candidate(const struct sproc *q, ts_ps at)
{
    return (q->state == RUN || q->state == SPIN) && q->ready_at <= at;
}

/* A sleeper still queued (DELAY_DEQUEUE): the CPU's choice weighs it as
 * any other task; chosen, it leaves instead of running. One woken and on
 * its way is not: it is requeued when it arrives (join()). */
static bool delayed_sleeper(const struct sproc *q)
{
    return q->delayed && q->state == SLEEP;
}

static void join(struct ts_sched *s, unsigned k, unsigned p, ts_ps at);

/* The participants woken onto CPU k that have arrived by `at` without
 * being weighed against a running task (their CPU idle, or choosing at
 * once) join its run queue: placed now, before the choice. */
static void settle_arrivals(struct ts_sched *s, unsigned k, ts_ps at)
{
    for (int p = s->cpus[k].first; p >= 0; p = s->procs[p].next)
        if (s->procs[p].pending && s->procs[p].state == RUN && s->procs[p].ready_at <= at) {
            join(s, k, (unsigned)p, at);
            s->procs[p].pending = false;
        }
}

static ts_ps mean_vruntime(const struct ts_sched *s, unsigned k, int except, unsigned *count);
static void finish_delayed_dequeue(struct ts_sched *s, unsigned p, ts_ps at);

/* The CPU chooses at `at` as EEVDF does (pick_eevdf): of the runnable
 * tasks whose virtual time is at most the mean (eligible: owed service),
 * the one of earliest virtual deadline; on a tie the task that was not
 * running, else the first considered (participants before noise); a
 * yielder only when nothing else can run. */
static void pick(struct ts_sched *s, unsigned k, ts_ps at)
{
    struct scpu *cpu = &s->cpus[k];
    settle_arrivals(s, k, at);
    if (cpu->kind != IDLE) {
        /* update_deadline: a holder that has reached its deadline asks
         * for its next slice, due a slice of virtual time later */
        ts_ps *deadline = holder_deadline(s, cpu), vruntime = *holder_vruntime(s, cpu);
        if (vruntime >= *deadline)
            *deadline = vruntime + s->c.slice;
    }
    unsigned n;
    enum holder was_kind = cpu->kind;
    unsigned was = cpu->holder;
    enum holder kind;
    unsigned who;
choose:
    kind = IDLE;
    who = 0;
    ts_ps mean = mean_vruntime(s, k, -1, &n), best = NEVER;
    bool best_was = false;
/* on a tie the task that was not running wins (its request came first);
 * CFS: every runnable task is a candidate, and the least virtual time wins */
#define CONSIDER(vr, dl, k, w)                                                                    \
    do {                                                                                          \
        bool was_it = (k) == was_kind && (w) == was;                                              \
        ts_ps key = s->c.cfs ? (vr) : (dl);                                                       \
        if ((s->c.cfs || (vr) <= mean) && (key < best || (key == best && best_was && !was_it))) { \
            best = key;                                                                           \
            kind = (k);                                                                           \
            who = (w);                                                                            \
            best_was = was_it;                                                                    \
        }                                                                                         \
    } while (0)
    /* a second pass, every candidate eligible, when none was: a yielder,
     * giving way to any other, still counts in the mean */
    for (int pass = 0; pass < 2 && kind == IDLE; pass++, mean = NEVER) {
        for (int p = cpu->first; p >= 0; p = s->procs[p].next)
            if (candidate(&s->procs[p], at) || delayed_sleeper(&s->procs[p]))
                CONSIDER(s->procs[p].vruntime, s->procs[p].deadline, PROC, (unsigned)p);
        for (unsigned j = 0; j < cpu->nnoise; j++)
            CONSIDER(cpu->noise_vruntime[j], cpu->noise_deadline[j], NOISE, j);
    }
    if (kind == IDLE) /* a yielder keeps the CPU when nobody else wants it */
        for (int p = cpu->first; p >= 0; p = s->procs[p].next)
            if (s->procs[p].state == YIELDER && s->procs[p].ready_at <= at) {
                mean = NEVER; /* it is the only one: no other to owe */
                CONSIDER(s->procs[p].vruntime, s->procs[p].deadline, PROC, (unsigned)p);
            }
#undef CONSIDER
    if (kind == PROC && delayed_sleeper(&s->procs[who])) {
        /* pick_next_entity: a delayed sleeper chosen leaves the queue,
         * and the CPU chooses again */
        finish_delayed_dequeue(s, who, at);
        goto choose;
    }
    if (was_kind != IDLE && (kind != was_kind || who != was))
        mark_left(s, cpu, was_kind, was, at);
    cpu->kind = kind;
    cpu->holder = who;
    if (kind == IDLE) {
        cpu->slice_end = NEVER;
        return;
    }
    bool changed = kind != was_kind || who != was;
    if (changed && was_kind != IDLE)
        s->stats.switches++;
    cpu->since = at + (changed && was_kind != IDLE ? s->c.switch_cost : 0);
    start_slice(s, cpu, cpu->since);
    if (kind == PROC && changed)
        count_run(s, who, cpu->since);
    if (kind == PROC && s->procs[who].state == SPIN)
        s->procs[who].spin_from = cpu->since;
    if (kind == PROC && s->procs[who].state == RUN && s->c.chosen)
        s->c.chosen(s->c.chosen_arg, who, cpu->since);
}

/* The mean virtual time of CPU k's queued tasks, participant `except`
 * left out (EEVDF's V, equal weights); *count of them. A woken or new
 * participant counts from its arrival, when it is placed: before, it is
 * on its way, on no run queue. A delayed sleeper counts until it leaves,
 * woken or not: it never left. */
static ts_ps mean_vruntime(const struct ts_sched *s, unsigned k, int except, unsigned *count)
{
    const struct scpu *cpu = &s->cpus[k];
    __int128 sum = 0;
    unsigned n = 0;
    for (unsigned j = 0; j < cpu->nnoise; j++, n++)
        sum += cpu->noise_vruntime[j];
    for (int p = cpu->first; p >= 0; p = s->procs[p].next) {
        const struct sproc *q = &s->procs[p];
        if (p != except && (q->delayed || (q->state != SLEEP && q->state != DONE && !q->pending))) {
            sum += q->vruntime;
            n++;
        }
    }
    *count = n;
    return n ? (ts_ps)(sum / n) : 0;
}

/* A task going to sleep keeps its lag, bounded as Linux bounds it
 * (update_entity_lag: two slices or a tick, the larger). */
static ts_ps clamp_lag(const struct ts_sched *s, ts_ps lag)
{
    ts_ps limit = 2 * s->c.slice > s->c.tick ? 2 * s->c.slice : s->c.tick;
    return lag > limit ? limit : lag < -limit ? -limit : lag;
}

static void keep_lag(struct ts_sched *s, unsigned k, unsigned p)
{
    unsigned n;
    s->procs[p].lag = clamp_lag(s, mean_vruntime(s, k, -1, &n) - s->procs[p].vruntime);
}

/* Participant p, holding CPU k, goes to sleep at `at` (its time counted).
 * Linux 6.12 and later (DELAY_DEQUEUE, on by default; dequeue_entity): a
 * task not eligible then (its virtual time past the mean, itself counted)
 * stays queued, competing until it is eligible, so that it cannot shed
 * what it owes by sleeping; one eligible leaves with its lag (PLACE_LAG).
 * Either way its load is brought to `at`: from then a delayed one's counts
 * as queued, an other's as blocked. */
static void go_to_sleep(struct ts_sched *s, unsigned k, unsigned p, ts_ps at)
{
    struct sproc *q = &s->procs[p];
    unsigned n;
    load_update(q, at);
    if (s->c.cfs) { /* CFS keeps its virtual time, for place() to judge */
        q->state = SLEEP;
        return;
    }
    q->delayed = q->vruntime > mean_vruntime(s, k, -1, &n);
    if (!q->delayed)
        keep_lag(s, k, p);
    q->state = SLEEP;
}

/* Delayed sleeper p leaves CPU k's queue at `at`, chosen there while
 * eligible (pick_next_entity, then finish_delayed_dequeue_entity): its lag
 * is then at least 0, and DELAY_ZERO cuts it to 0, so that a sleep never
 * earns credit; a later wake-up places it at the mean. */
static void finish_delayed_dequeue(struct ts_sched *s, unsigned p, ts_ps at)
{
    struct sproc *q = &s->procs[p];
    load_update(q, at);
    q->delayed = false;
    q->lag = 0;
}

/* Another task than the holder could run on the CPU at `at`. */
static bool others_runnable(const struct ts_sched *s, unsigned k, ts_ps at)
{
    const struct scpu *cpu = &s->cpus[k];
    if (cpu->nnoise > (cpu->kind == NOISE))
        return true;
    for (int p = cpu->first; p >= 0; p = s->procs[p].next)
        if (!(cpu->kind == PROC && cpu->holder == (unsigned)p) && candidate(&s->procs[p], at))
            return true;
    return false;
}

/* The earliest time a participant woken onto busy CPU k arrives on its
 * run queue (its wake-up latency past), *who it is; NEVER: none. */
static ts_ps next_arrival(const struct ts_sched *s, unsigned k, int *who)
{
    ts_ps soonest = NEVER;
    *who = -1;
    for (int p = s->cpus[k].first; p >= 0; p = s->procs[p].next)
        if (s->procs[p].pending && s->procs[p].state == RUN && s->procs[p].ready_at < soonest) {
            soonest = s->procs[p].ready_at;
            *who = p;
        }
    return soonest;
}

/* Participant p joins CPU k's run queue with the lag it slept with
 * (EEVDF's place_entity): at the CPU's mean virtual time V of the n others
 * less its lag, the lag inflated by (n + 1) / n, so that the mean it then
 * joins, pulled back by its own arrival, leaves it exactly that lag
 * behind. Without the inflation every sleep would forgive a share of its
 * lag: a task that ran past its share and sleeps often would keep the
 * CPU. The running task's time must be counted first (enqueue_entity
 * calls update_curr before place_entity). */
static void place(struct ts_sched *s, unsigned k, unsigned p, ts_ps at)
{
    struct sproc *q = &s->procs[p];
    if (s->c.cfs) { /* place_entity of CFS (above) */
        ts_ps least = cfs_min_vruntime(s, k, (int)p);
        unsigned others = nr_running(s, k, at) - (runnable(q) && !q->pending && q->ready_at <= at);
        if (q->initial)
            q->vruntime = least + cfs_ideal(s, others + 1);
        else if (q->vruntime < least - cfs_latency(s) / 2)
            q->vruntime = least - cfs_latency(s) / 2;
        q->initial = false;
        return;
    }
    unsigned n;
    ts_ps v = mean_vruntime(s, k, (int)p, &n);
    if (n)
        q->vruntime = v - (ts_ps)((__int128)q->lag * (n + 1) / n);
    /* its deadline a slice on (place_entity); a new task's half a slice
     * (PLACE_DEADLINE_INITIAL) */
    q->deadline = q->vruntime + (q->initial ? s->c.slice / 2 : s->c.slice);
    q->initial = false;
}

/* Woken participant p, arriving, takes its place in CPU k's queue. One
 * that slept delayed never left it (requeue_delayed_entity): it keeps its
 * virtual time and deadline while it still owes service, and is placed
 * anew with no lag (DELAY_ZERO) when the others' time has caught up with
 * it while it slept. Any other is placed with the lag it slept with. */
static void join(struct ts_sched *s, unsigned k, unsigned p, ts_ps at)
{
    struct sproc *q = &s->procs[p];
    if (!q->delayed) {
        place(s, k, p, at);
        return;
    }
    q->delayed = false;
    unsigned n;
    if (clamp_lag(s, mean_vruntime(s, k, -1, &n) - q->vruntime) > 0) {
        q->lag = 0;
        place(s, k, p, at);
    }
}

/* Woken participant p arrives on busy CPU k's run queue at `at`, and is
 * weighed against the running task there and then (Linux's
 * check_preempt_wakeup_fair, when the wake-up is enqueued: not at the
 * waker's call, for the CPU may have changed task in between). The CPU
 * chooses again at once when the running task is no longer eligible (its
 * virtual time past the mean, the woken one counted: the slice
 * protection, RUN_TO_PARITY, covers an eligible one only), or has spent
 * its slice (the wake-up counts its time, and update_deadline then asks
 * for a choice). A yielder gives way to it in any case. */
static void arrive(struct ts_sched *s, unsigned k, unsigned p, ts_ps at)
{
    struct scpu *cpu = &s->cpus[k];
    s->procs[p].pending = false;
    account(s, cpu, at);
    unsigned n;
    join(s, k, p, at);
    ts_ps running = *holder_vruntime(s, cpu);
    if (cpu->kind == PROC && s->procs[cpu->holder].state == YIELDER)
        hand_over(s, cpu, p, at, at + s->c.switch_cost);
    else if (s->c.cfs)
        cfs_preempt_or_reslice(s, k, running, s->procs[p].vruntime, at);
    else if (running > mean_vruntime(s, k, -1, &n) || at >= cpu->protect_end)
        pick(s, k, at);
}

/* Replay CPU k's own decisions up to t: slices ending, spins running out,
 * woken participants arriving. */
static void advance(struct ts_sched *s, unsigned k, ts_ps t)
{
    struct scpu *cpu = &s->cpus[k];
    for (;;) {
        if (cpu->kind == IDLE) {
            /* a participant woken onto an idle CPU becomes runnable later */
            ts_ps soonest = NEVER;
            for (int p = cpu->first; p >= 0; p = s->procs[p].next)
                if (s->procs[p].state == RUN || s->procs[p].state == SPIN)
                    soonest = s->procs[p].ready_at < soonest ? s->procs[p].ready_at : soonest;
            if (soonest > t)
                return;
            pick(s, k, soonest);
            continue;
        }
        ts_ps spent = NEVER;
        if (cpu->kind == PROC && spin_bounded(&s->procs[cpu->holder]) &&
            spin_end(&s->procs[cpu->holder], cpu) <= cpu->slice_end)
            spent = spin_end(&s->procs[cpu->holder], cpu);
        int woken;
        ts_ps arrives = next_arrival(s, k, &woken);
        if (arrives <= spent && arrives <= cpu->slice_end) {
            if (arrives > t)
                return;
            arrive(s, k, (unsigned)woken, arrives);
            continue;
        }
        if (spent <= t) {
            struct sproc *q = &s->procs[cpu->holder];
            charge(s, cpu, spent);
            cpu->since = spent;
            q->spin_left = 0;
            q->spin_out = spent;
            if (q->then == TS_SCHED_SLEEP) {
                /* Linux charges the sleeper its way into the futex wait
                 * and, woken, back out; here that time passes inside the
                 * switch and the wake-up latency, when the CPU's other
                 * task is charged, so the sleeper is charged it now, as
                 * its lag is taken (docs/model.md section 9) */
                q->vruntime += s->c.sleep_cpu;
                go_to_sleep(s, k, cpu->holder, spent);
                s->stats.sleeps++;
                pick(s, k, spent);
            } else {
                q->state = YIELDER;
                if (others_runnable(s, k, spent))
                    pick(s, k, spent + s->c.yield_cost);
            }
            continue;
        }
        if (cpu->slice_end > t)
            return;
        ts_ps end = cpu->slice_end;
        if (cpu->kind == PROC) {
            struct sproc *q = &s->procs[cpu->holder];
            if (spin_bounded(q))
                q->spin_left = spin_end(q, cpu) - end;
        }
        charge(s, cpu, end);
        pick(s, k, end);
    }
}

/* When CPU k next chooses: its slice's end, or sooner when the spinning
 * holder's spin runs out or a woken participant arrives first. */
static ts_ps next_choice(const struct ts_sched *s, unsigned k)
{
    const struct scpu *cpu = &s->cpus[k];
    ts_ps next = cpu->slice_end;
    if (cpu->kind == PROC) {
        const struct sproc *q = &s->procs[cpu->holder];
        if (spin_bounded(q) && spin_end(q, cpu) < next)
            next = spin_end(q, cpu);
    }
    int woken;
    ts_ps arrives = next_arrival(s, k, &woken);
    return arrives < next ? arrives : next;
}

static void create(struct ts_sched *s, unsigned p, ts_ps t);

ts_ps ts_sched_created(const struct ts_sched *s, unsigned p)
{
    return s->c.create_first + (ts_ps)p * s->c.create_every;
}

ts_ps ts_sched_gate(struct ts_sched *s, unsigned p, ts_ps t)
{
    struct sproc *q = &s->procs[p];
    if (q->state == NEW)
        create(s, p, max_ps(t, ts_sched_created(s, p)));
    unsigned k = q->cpu;
    struct scpu *cpu = &s->cpus[k];
    t = max_ps(t, q->ready_at);
    advance(s, k, t);
    if (cpu->kind == PROC && cpu->holder == p)
        return max_ps(t, cpu->since);
    if (cpu->kind == IDLE) {
        pick(s, k, t);
        return cpu->kind == PROC && cpu->holder == p ? max_ps(t, cpu->since) : next_choice(s, k);
    }
    if (cpu->kind == PROC && s->procs[cpu->holder].state == YIELDER) {
        /* a yielder in its loop hands the CPU over at its next yield */
        hand_over(s, cpu, p, t, t + s->c.yield_cost + s->c.switch_cost);
        return cpu->since;
    }
    return next_choice(s, k);
}

void ts_sched_wait_begin(struct ts_sched *s, unsigned p, ts_ps t, ts_ps spin,
                         enum ts_sched_then then)
{
    struct sproc *q = &s->procs[p];
    struct scpu *cpu = &s->cpus[q->cpu];
    advance(s, q->cpu, t);
    q->state = SPIN;
    q->then = then;
    if (spin >= 0) {
        q->spin_left = spin;
        q->spin_out = -1;
    }
    q->spin_from = t;
    if (cpu->kind == PROC && cpu->holder == p)
        q->spin_from = max_ps(t, cpu->since);
    advance(s, q->cpu, t); /* a spin of 0 ends now */
}

/* CPU k runs nothing and nothing waits for it: not even a participant
 * woken a moment ago and not yet running there (Linux's idle_cpu: no task
 * running or queued, no wake-up pending), so that the sleepers of one
 * broadcast go to different idle CPUs. */
static bool idle_cpu(const struct ts_sched *s, unsigned k)
{
    if (s->cpus[k].kind != IDLE)
        return false;
    for (int p = s->cpus[k].first; p >= 0; p = s->procs[p].next)
        if (s->procs[p].state != SLEEP && s->procs[p].state != DONE)
            return false;
    return true;
}

/* CPU k's load at t (cpu_load: the PELT loads of the tasks queued there
 * and of those that last ran there and sleep, their blocked load). */
static double cpu_load(const struct ts_sched *s, unsigned k, ts_ps t)
{
    double load = s->cpus[k].nnoise; /* busy since long before: full load */
    for (int p = s->cpus[k].first; p >= 0; p = s->procs[p].next)
        load += load_at(&s->procs[p], t);
    return load;
}

/* Linux's wake_affine (WA_IDLE, then WA_WEIGHT; a futex wake-up is not
 * synchronous): the waker's CPU `waker` or the wakee's own, `prev`. The
 * waker's CPU when it is idle and the wakee's is not; else its own when
 * idle; else the waker's when its load with the wakee's is below the
 * wakee's CPU's load without it, that load biased by AFFINE_PREV_BIAS. */
static unsigned wake_affine(struct ts_sched *s, unsigned p, unsigned waker, unsigned prev, ts_ps t)
{
    if (idle_cpu(s, waker))
        return idle_cpu(s, prev) ? prev : waker;
    if (idle_cpu(s, prev))
        return prev;
    double task = load_at(&s->procs[p], t);
    double this_load = cpu_load(s, waker, t) + task;
    double prev_load = (cpu_load(s, prev, t) - task) * AFFINE_PREV_BIAS;
    return this_load < prev_load ? waker : prev;
}

/* ---------------------------------------------------------------------- */
/* The periodic balancer (Linux's sched_balance_rq; docs/model.md section  */
/* 9): every CPU, each interval, pulls queued tasks from the most loaded   */
/* other CPU, the whole machine as one domain of single-CPU groups.        */

/* A task that left its CPU less than this ago is cache hot: it stays
 * unless the balancer failed more than CACHE_NICE_TRIES turns in a row
 * (sysctl_sched_migration_cost; cache_nice_tries of sd_init). */
#define MIGRATION_COST ((ts_ps)500000000)
#define CACHE_NICE_TRIES 1u
/* The busiest CPU must carry more than this percentage of the local one's
 * load when both are overloaded (imbalance_pct, sd_init, above SMT). */
#define IMBALANCE_PCT 117
/* detach_tasks looks at this many tasks at most (sysctl_sched_nr_migrate) */
#define NR_MIGRATE 32u
/* LB_MIN: a task of less load stays while no turn has failed (16 of 1024) */
#define LB_MIN_LOAD (16.0 / 1024.0)

/* CPU k's runnable tasks at t: its busy neighbours and the participants
 * on its run queue (a woken one from its arrival). */
static unsigned nr_running(const struct ts_sched *s, unsigned k, ts_ps t)
{
    unsigned n = s->cpus[k].nnoise;
    for (int p = s->cpus[k].first; p >= 0; p = s->procs[p].next)
        n += runnable(&s->procs[p]) && !s->procs[p].pending && s->procs[p].ready_at <= t;
    return n;
}

/* A task arrived on CPU k at t (moved there): weighed against the running
 * one as a woken task is (arrive()), or run when the CPU is idle. */
static void weigh_newcomer(struct ts_sched *s, unsigned k, ts_ps t)
{
    struct scpu *cpu = &s->cpus[k];
    if (cpu->kind == IDLE) {
        pick(s, k, t);
        return;
    }
    account(s, cpu, t);
    unsigned n;
    ts_ps running = *holder_vruntime(s, cpu);
    bool yielder = cpu->kind == PROC && s->procs[cpu->holder].state == YIELDER;
    if (s->c.cfs && !yielder) {
        /* each task attached is weighed as a woken one (check_preempt_curr):
         * the least virtual time among them decides */
        ts_ps least = NEVER;
        for (unsigned j = 0; j < cpu->nnoise; j++)
            if (!(cpu->kind == NOISE && cpu->holder == j) && cpu->noise_vruntime[j] < least)
                least = cpu->noise_vruntime[j];
        for (int p = cpu->first; p >= 0; p = s->procs[p].next)
            if (!(cpu->kind == PROC && cpu->holder == (unsigned)p) && candidate(&s->procs[p], t) &&
                s->procs[p].vruntime < least)
                least = s->procs[p].vruntime;
        if (least != NEVER)
            cfs_preempt_or_reslice(s, k, running, least, t);
        else
            cfs_reslice(s, cpu, t);
        return;
    }
    if (yielder || running > mean_vruntime(s, k, -1, &n) || t >= cpu->protect_end)
        pick(s, k, t);
}

/* Move queued busy neighbour j of CPU src to CPU dst at t, with its lag
 * (EEVDF keeps it across a migration: dequeue, then place_entity). */
static void move_noise(struct ts_sched *s, unsigned src, unsigned j, unsigned dst, ts_ps t)
{
    struct scpu *from = &s->cpus[src], *to = &s->cpus[dst];
    unsigned n;
    /* CFS: its virtual time relative to the CPUs' min_vruntime */
    ts_ps relative = from->noise_vruntime[j] - (s->c.cfs ? cfs_min_vruntime(s, src, -1) : 0);
    ts_ps lag = clamp_lag(s, mean_vruntime(s, src, -1, &n) - from->noise_vruntime[j]);
    ts_ps last_ran = from->noise_last_ran[j];
    ts_ps request = from->noise_deadline[j] - from->noise_vruntime[j];
    unsigned last = --from->nnoise; /* the last one takes j's place */
    from->noise_vruntime[j] = from->noise_vruntime[last];
    from->noise_deadline[j] = from->noise_deadline[last];
    from->noise_last_ran[j] = from->noise_last_ran[last];
    if (from->kind == NOISE && from->holder == last)
        from->holder = j;
    account(s, to, t);
    ts_ps v = mean_vruntime(s, dst, -1, &n);
    to->noise_vruntime[to->nnoise] = s->c.cfs ? cfs_min_vruntime(s, dst, -1) + relative
                                     : n      ? v - (ts_ps)((__int128)lag * (n + 1) / n)
                                              : 0;
    to->noise_deadline[to->nnoise] = to->noise_vruntime[to->nnoise] + request;
    to->noise_last_ran[to->nnoise] = last_ran;
    to->nnoise++;
    s->stats.noise_moves++;
}

/* Move queued participant p to CPU dst at t, with its lag. */
static void move_proc(struct ts_sched *s, unsigned p, unsigned dst, ts_ps t)
{
    struct sproc *q = &s->procs[p];
    unsigned n;
    load_update(q, t);
    ts_ps lag = clamp_lag(s, mean_vruntime(s, q->cpu, -1, &n) - q->vruntime);
    ts_ps relative = q->vruntime - (s->c.cfs ? cfs_min_vruntime(s, q->cpu, -1) : 0);
    crowd_count(s, t);
    unlink_proc(s, p);
    link_proc(s, p, dst);
    account(s, &s->cpus[dst], t);
    if (s->c.cfs) { /* CFS: relative to the CPUs' min_vruntime */
        q->vruntime = cfs_min_vruntime(s, dst, (int)p) + relative;
        s->stats.migrations++;
        return;
    }
    ts_ps v = mean_vruntime(s, dst, (int)p, &n);
    ts_ps request = q->deadline - q->vruntime;
    if (n)
        q->vruntime = v - (ts_ps)((__int128)lag * (n + 1) / n);
    q->deadline = q->vruntime + request; /* a migration keeps it (rel_deadline) */
    s->stats.migrations++;
}

/* A task the balancer may move: a busy neighbour's index on its CPU or a
 * participant, and when it last ran. */
struct movable_task {
    enum holder kind;
    unsigned who;
    ts_ps last_ran;
};

/* The queued tasks of CPU k the balancer may move, least recently run
 * first (detach_tasks takes cfs_tasks from its tail): busy neighbours,
 * and participants when unbound; into tasks[], up to NR_MIGRATE. */
static unsigned movable(const struct ts_sched *s, unsigned k, ts_ps t,
                        struct movable_task tasks[NR_MIGRATE])
{
    const struct scpu *cpu = &s->cpus[k];
    unsigned n = 0;
    for (unsigned j = 0; j < cpu->nnoise && n < NR_MIGRATE; j++)
        if (!(cpu->kind == NOISE && cpu->holder == j))
            tasks[n++] = (struct movable_task){NOISE, j, cpu->noise_last_ran[j]};
    for (int p = cpu->first; s->c.unbound && p >= 0 && n < NR_MIGRATE; p = s->procs[p].next) {
        const struct sproc *q = &s->procs[p];
        if (runnable(q) && !q->pending && q->ready_at <= t &&
            !(cpu->kind == PROC && cpu->holder == (unsigned)p))
            tasks[n++] = (struct movable_task){PROC, (unsigned)p, q->last_ran};
    }
    for (unsigned i = 1; i < n; i++) /* insertion sort by last_ran, stable */
        for (unsigned m = i; m > 0 && tasks[m - 1].last_ran > tasks[m].last_ran; m--) {
            struct movable_task swap = tasks[m];
            tasks[m] = tasks[m - 1];
            tasks[m - 1] = swap;
        }
    return n;
}

/* CPU k's turn at t: whether it pulls, what, and its next turn. */
static void balance(struct ts_sched *s, unsigned k, ts_ps t)
{
    struct scpu *local = &s->cpus[k];
    double total = 0, local_load = cpu_load(s, k, t), busiest_load = 0;
    unsigned local_nr = nr_running(s, k, t), busiest_nr = 0;
    int busiest = -1;
    for (unsigned c = 0; c < s->c.ncpus; c++) {
        double load = c == k ? local_load : cpu_load(s, c, t);
        total += load;
        unsigned nr = c == k ? 0 : nr_running(s, c, t);
        /* only an overloaded CPU gives tasks away (more than it can run) */
        if (c != k && nr >= 2 && (busiest < 0 || load > busiest_load))
            busiest = (int)c, busiest_load = load, busiest_nr = nr;
    }
    double avg = total / s->c.ncpus, imbalance = 0;
    bool by_count = local_nr == 0; /* an idle CPU evens out the tasks */
    if (busiest < 0)
        goto balanced;
    if (by_count) {
        imbalance = busiest_nr / 2; /* sibling_imbalance, then halved */
    } else {
        if (local_load >= busiest_load || local_load >= avg)
            goto balanced;
        /* both overloaded: the busiest must be heavier by imbalance_pct */
        if (local_nr >= 2 && 100 * busiest_load <= IMBALANCE_PCT * local_load)
            goto balanced;
        double over = busiest_load - avg, under = avg - local_load;
        imbalance = over < under ? over : under; /* migrate_load */
    }
    if (imbalance <= 0)
        goto balanced;
    struct movable_task tasks[NR_MIGRATE];
    unsigned moved = 0, src = (unsigned)busiest;
    /* every CPU was advanced to t before the turns (ts_sched_settle) */
    account(s, &s->cpus[src], t);
    unsigned n = movable(s, src, t, tasks);
    for (unsigned i = 0; i < n && imbalance > 0; i++) {
        bool hot = t - tasks[i].last_ran < MIGRATION_COST;
        if (hot && local->failed <= CACHE_NICE_TRIES)
            continue;
        if (!by_count) {
            double load = tasks[i].kind == NOISE ? 1.0 : load_at(&s->procs[tasks[i].who], t);
            if (load < LB_MIN_LOAD && local->failed == 0)
                continue;
            /* shr_bound: a failed turn halves what must fit the imbalance */
            double bound = load / (double)(1u << (local->failed < 31 ? local->failed : 31));
            if (bound > imbalance)
                continue;
            imbalance -= load;
        } else {
            imbalance -= 1;
        }
        if (tasks[i].kind == NOISE) {
            /* the moved one's place goes to src's last busy neighbour: a
             * later entry naming that one names this place now */
            unsigned last_index = s->cpus[src].nnoise - 1;
            move_noise(s, src, tasks[i].who, k, t);
            for (unsigned m = i + 1; m < n; m++)
                if (tasks[m].kind == NOISE && tasks[m].who == last_index)
                    tasks[m].who = tasks[i].who;
        } else {
            move_proc(s, tasks[i].who, k, t);
        }
        moved++;
    }
    if (moved) {
        local->failed = 0;
        weigh_newcomer(s, k, t);
    } else if (++local->failed > CACHE_NICE_TRIES + 2) {
        /* active balance: the busiest's stopper takes its running task
         * off, and the least recently run task there comes over, hot or
         * not, whatever its load (detach_one_task) */
        struct scpu *from = &s->cpus[src];
        if (from->kind == NOISE || (from->kind == PROC && s->c.unbound)) {
            n = movable(s, src, t, tasks);
            if (n == 0) { /* nothing queued: the preempted one itself */
                tasks[0] = (struct movable_task){from->kind, from->holder, 0};
                mark_left(s, from, from->kind, from->holder, t);
                from->kind = IDLE;
            }
            if (tasks[0].kind == NOISE)
                move_noise(s, src, tasks[0].who, k, t);
            else
                move_proc(s, tasks[0].who, k, t);
            if (from->kind == IDLE)
                pick(s, src, t);
            weigh_newcomer(s, k, t);
            s->stats.active_balances++;
            local->failed = CACHE_NICE_TRIES + 1; /* "force task migration" */
        }
    }
    local->interval_ms = s->c.ncpus; /* unbalanced: back to the least interval */
    local->next_balance = t + balance_interval(s, local, nr_running(s, k, t) > 0);
    return;
balanced:
    local->failed = 0;
    if (local->interval_ms < 2 * s->c.ncpus) /* up to max_interval, twice sd_weight */
        local->interval_ms *= 2;
    local->next_balance = t + balance_interval(s, local, local_nr > 0);
}

bool ts_sched_settle(struct ts_sched *s, ts_ps t)
{
    bool turns = s->next_balance <= t;
    while (s->next_balance <= t) {
        ts_ps at = s->next_balance;
        for (unsigned k = 0; k < s->c.ncpus; k++)
            advance(s, k, at);
        for (unsigned k = 0; k < s->c.ncpus; k++)
            if (s->cpus[k].next_balance == at)
                balance(s, k, at);
        s->next_balance = NEVER;
        for (unsigned k = 0; k < s->c.ncpus; k++)
            if (s->cpus[k].next_balance < s->next_balance)
                s->next_balance = s->cpus[k].next_balance;
    }
    return turns;
}

/* Unbound: where a participant woken at t by participant `waker` (-1:
 * none) runs, as select_task_rq_fair chooses for a wake-up: a target by
 * wake_affine, then the first idle one of the target, its own CPU and
 * the others (select_idle_sibling, the whole machine as one cache
 * domain), else the target. Not modelled: wake_wide (a waker of many
 * distinct wakees loses the affine choice when its wakees do too) and the
 * scan's limits; the periodic balancer's moves are balance()'s. */
static unsigned wake_cpu(struct ts_sched *s, unsigned p, ts_ps t, int waker)
{
    unsigned own = s->procs[p].cpu;
    if (!s->c.unbound)
        return own;
    unsigned target = own;
    if (waker >= 0 && s->procs[waker].cpu != own) {
        advance(s, s->procs[waker].cpu, t);
        target = wake_affine(s, p, s->procs[waker].cpu, own, t);
    }
    if (idle_cpu(s, target))
        return target;
    if (idle_cpu(s, own))
        return own;
    for (unsigned k = 0; k < s->c.ncpus; k++) {
        if (k == own || k == target)
            continue;
        advance(s, k, t);
        if (idle_cpu(s, k))
            return k;
    }
    return target;
}

/* Participant p is created at t: it joins its CPU's run queue as a new
 * task does (wake_up_new_task: placed with no lag, a new task's full
 * load), on the CPU it starts on (bound, or in turn; Linux's fork
 * placement is not modelled: docs/model.md section 9, "Runs in time"). */
static void create(struct ts_sched *s, unsigned p, ts_ps t)
{
    struct sproc *q = &s->procs[p];
    unsigned k = s->c.cpu[p];
    advance(s, k, t);
    link_proc(s, p, k);
    q->state = RUN;
    q->lag = 0;
    q->load = 1.0;
    q->load_at = t;
    q->last_ran = t;
    q->ready_at = t;
    q->initial = true;
    q->pending = true; /* weighed against the running task as it arrives */
}

ts_ps ts_sched_wake(struct ts_sched *s, unsigned p, ts_ps t, int waker, ts_ps *ready)
{
    struct sproc *q = &s->procs[p];
    advance(s, q->cpu, t);
    *ready = t;
    if (q->state != SLEEP) { /* it sees the write when it next runs */
        if (q->state == SPIN || q->state == YIELDER)
            q->state = RUN;
        return 0;
    }
    s->stats.wakeups++;
    load_update(q, t); /* its blocked load, as it wakes */
    /* a delayed sleeper is still queued where it slept: the waker requeues
     * it there (ttwu_runnable), no CPU is chosen; its CPU runs another
     * task (else it would have left), and that one is told to choose
     * (wakeup_preempt's interrupt) as a woken task is, across CPUs */
    unsigned k = q->delayed ? q->cpu : wake_cpu(s, p, t, waker);
    bool local = waker >= 0 && s->procs[waker].cpu == k;
    if (local)
        /* woken onto its waker's own CPU: the waker enqueues it during its
         * call (ttwu_queue_cond: no wake list, no interrupt, no exit from
         * an idle state), and it is weighed against the waker then; the
         * wake-up latencies are measured across CPUs */
        *ready = t;
    else
        *ready = t + (s->cpus[k].kind == IDLE ? s->c.wake_latency : s->c.wake_latency_busy);
    if (k != q->cpu) {
        if (s->c.cfs) {
            /* CFS (migrate_task_rq_fair, then enqueue): its virtual time
             * moves from the old CPU's min_vruntime to the new one's */
            advance(s, k, t);
            account(s, &s->cpus[k], t);
            account(s, &s->cpus[q->cpu], t);
            q->vruntime += cfs_min_vruntime(s, k, -1) - cfs_min_vruntime(s, q->cpu, (int)p);
        }
        crowd_count(s, t);
        unlink_proc(s, p);
        link_proc(s, p, k);
        s->stats.migrations++;
    }
    /* Placed when it joins the run queue, its wake-up latency later
     * (arrive(), or settle_arrivals() when its CPU chooses): the running
     * task's time until then is counted before the mean is taken, so the
     * latency earns the sleeper no credit over it, and a wakee moved to
     * another CPU is placed on that CPU's virtual time. */
    q->state = RUN;
    q->ready_at = *ready;
    q->pending = true; /* weighed against the running task when it arrives */
    return local ? s->c.wake_call_local : s->c.wake_call;
}

ts_ps ts_sched_spin_ran_out(const struct ts_sched *s, unsigned p)
{
    return s->procs[p].spin_out;
}

unsigned ts_sched_noise_on(const struct ts_sched *s, unsigned k)
{
    return s->cpus[k].nnoise;
}

ts_ps ts_sched_vruntime(const struct ts_sched *s, unsigned p)
{
    return s->procs[p].vruntime;
}

unsigned ts_sched_cpu(const struct ts_sched *s, unsigned p)
{
    return s->procs[p].cpu;
}

bool ts_sched_asleep(struct ts_sched *s, unsigned p, ts_ps t)
{
    advance(s, s->procs[p].cpu, t);
    return s->procs[p].state == SLEEP;
}

void ts_sched_done(struct ts_sched *s, unsigned p, ts_ps t)
{
    struct sproc *q = &s->procs[p];
    struct scpu *cpu = &s->cpus[q->cpu];
    advance(s, q->cpu, t);
    load_update(q, t);
    crowd_count(s, t);
    s->crowd_over = true;
    q->state = DONE;
    if (cpu->kind == PROC && cpu->holder == p) {
        charge(s, cpu, t);
        pick(s, q->cpu, t);
    }
}
