/*
 * The simulation engine: virtual participants, virtual time, and the cost
 * of every memory event (docs/model.md, "The cost model").
 * The why: docs/design.md section 8.15.
 */
#include "model/sim_engine.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/error.h"
#include "model/sim_context.h"
#include "model/sim_events.h"
#include "wait/wait.h"

#if defined(__SANITIZE_ADDRESS__)
#define TS_SIM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TS_SIM_ASAN 1
#endif
#endif
#ifdef TS_SIM_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#define TS_SIM_STACK (256u << 10)
#else
#define TS_SIM_STACK (64u << 10)
#endif

enum proc_state { READY, RUNNING, PARKED, DONE };

struct cached {   /* a participant's copy of a line */
    uint32_t key; /* line index + 1; 0: empty slot */
    uint32_t gen; /* the line's generation when the copy was taken */
    ts_ps ready;  /* when the copy arrived */
};

struct proc {
    ts_context ctx;
    void *stack_map;
    size_t stack_map_size;
    unsigned rank, pu;
    ts_ps clock;
    ts_ps stores_done; /* commit time of the latest store */
    uint64_t tiebreak;
    enum proc_state state;
    struct proc *next_parked;
    struct cached *cache; /* open addressing, power-of-two capacity */
    uint32_t cache_cap, cache_used;
    ts_ps *outstanding; /* arrival times of misses in flight, [mlp - 1] */
    unsigned noutstanding;
    const _Atomic uint32_t *waits_on; /* the word of its wait (the scheduler) */
    unsigned heap_pos;                /* READY: its index in sim.heap */
    bool waits_for_cpu;               /* its clock was moved on to ask for its CPU again */
    ts_ps cpu_wait_from;              /* the clock it had then */
    uint32_t spin_learned;            /* its learned spin cap + 1 in pauses; 0: none yet */
};

struct sharer {
    unsigned rank;
    ts_ps ready;
};

struct line {
    uint32_t gen;
    unsigned home;     /* where its requests are served (sim.home_busy) */
    int owner;         /* rank of the last writer (initially the first toucher) */
    ts_ps owner_ready; /* when its copy is complete */
    ts_ps busy_until;  /* the last exclusive request served ends here */
    struct sharer *sharers;
    uint32_t nsharers, cap;
    struct proc *parked;
};

struct sim {
    const struct ts_sim_config *cfg;
    struct proc *procs;
    struct proc **heap;
    unsigned heap_n;
    struct line *lines;
    size_t nlines;
    ts_ps home_service; /* a request's occupancy of its line's home; 0: none */
    ts_ps *home_busy;   /* [pu_limit + 1]: when each home (home_of) is next free */
    unsigned line_shift;
    unsigned mlp;
    ts_ps *outstanding_pool; /* every participant's outstanding[] */
    struct ts_sched *sched;  /* NULL: no scheduler */
    struct proc *cur;
    ts_context main_ctx;
    uint64_t rng;
    uint64_t events;
    unsigned ndone;
    bool stopped;
    bool oom;
#ifdef TS_SIM_ASAN
    const void *main_stack_bottom; /* learnt at the first switch away from it */
    size_t main_stack_size;
#endif
};

static _Thread_local struct sim *current;

/* ---------------------------------------------------------------------- */
/* Randomness and the run queue.                                            */

static uint64_t next_random(struct sim *s)
{
    return ts_splitmix_mix(s->rng += TS_SPLITMIX_STEP);
}

static bool earlier(const struct proc *a, const struct proc *b)
{
    if (a->clock != b->clock)
        return a->clock < b->clock;
    if (a->tiebreak != b->tiebreak)
        return a->tiebreak < b->tiebreak;
    return a->rank < b->rank;
}

static inline ts_ps max_ps(ts_ps a, ts_ps b)
{
    return a > b ? a : b;
}

static void sift_up(struct sim *s, struct proc *p, unsigned i)
{
    while (i > 0) {
        unsigned parent = (i - 1) / 2;
        if (!earlier(p, s->heap[parent]))
            break;
        s->heap[i] = s->heap[parent];
        s->heap[i]->heap_pos = i;
        i = parent;
    }
    s->heap[i] = p;
    p->heap_pos = i;
}

static void heap_push(struct sim *s, struct proc *p)
{
    sift_up(s, p, s->heap_n++);
    p->state = READY;
}

/* The scheduler gave p its CPU at `at`, sooner than p's clock: p acts then
 * (p waits in the heap for its CPU with the time it was last told). */
static void cpu_given(void *arg, unsigned rank, ts_ps at)
{
    struct sim *s = arg;
    struct proc *p = &s->procs[rank];
    /* only a participant waiting for its CPU, and never before it began
     * to wait: its clock is otherwise its next event's own time */
    if (p->state != READY || !p->waits_for_cpu)
        return;
    ts_ps then = max_ps(at, p->cpu_wait_from);
    if (s->cur) /* nor before the event being simulated: time runs forward */
        then = max_ps(then, s->cur->clock);
    if (then >= p->clock)
        return;
    p->clock = then;
    sift_up(s, p, p->heap_pos);
}

static struct proc *heap_pop(struct sim *s)
{
    if (s->heap_n == 0)
        return NULL;
    struct proc *top = s->heap[0], *last = s->heap[--s->heap_n];
    unsigned i = 0;
    for (;;) {
        unsigned c = 2 * i + 1;
        if (c >= s->heap_n)
            break;
        if (c + 1 < s->heap_n && earlier(s->heap[c + 1], s->heap[c]))
            c++;
        if (!earlier(s->heap[c], last))
            break;
        s->heap[i] = s->heap[c];
        s->heap[i]->heap_pos = i;
        i = c;
    }
    if (s->heap_n) {
        s->heap[i] = last;
        last->heap_pos = i;
    }
    return top;
}

/* ---------------------------------------------------------------------- */
/* Switching between participants.                                          */

static void swap_to(struct sim *s, ts_context *from, struct proc *to)
{
#ifdef TS_SIM_ASAN
    void *fake = NULL;
    if (to)
        __sanitizer_start_switch_fiber(&fake, (char *)to->stack_map + getpagesize(),
                                       to->stack_map_size - (size_t)getpagesize());
    else
        __sanitizer_start_switch_fiber(&fake, s->main_stack_bottom, s->main_stack_size);
#endif
    s->cur = to;
    if (to)
        to->state = RUNNING;
    ts_context_switch(from, to ? &to->ctx : &s->main_ctx);
#ifdef TS_SIM_ASAN
    __sanitizer_finish_switch_fiber(fake, NULL, NULL);
#endif
}

/* Give the thread to the earliest ready participant, or back to ts_sim_run
 * when none is ready (all done, deadlock, or stopped). */
static void switch_away(struct sim *s, struct proc *from)
{
    struct proc *next = s->stopped ? NULL : heap_pop(s);
    swap_to(s, &from->ctx, next);
}

/* An event of the current participant is about to happen at its clock:
 * make sure nobody is earlier. */
static void event_begin(struct sim *s, struct proc *p)
{
    s->events++;
    p->tiebreak = next_random(s);
    for (;;) {
        /* with a scheduler, the event waits until p holds its CPU */
        bool moved = false;
        if (s->sched) {
            ts_ps at = ts_sched_gate(s->sched, p->rank, p->clock);
            moved = at > p->clock;
            if (moved && !p->waits_for_cpu) {
                p->waits_for_cpu = true;
                p->cpu_wait_from = p->clock;
            }
            if (moved)
                p->clock = at;
            else
                p->waits_for_cpu = false; /* it holds its CPU: the event goes on */
        }
        if (s->heap_n && earlier(s->heap[0], p)) {
            heap_push(s, p);
            switch_away(s, p);
            if (!s->sched)
                return; /* resumed as the earliest: nothing else to ask */
            continue;
        }
        if (!moved) {
            /* p is the earliest now: the balancer's turns up to its time
             * are due, and may have moved a task onto or off its CPU */
            if (s->sched && ts_sched_settle(s->sched, p->clock))
                continue;
            return;
        }
    }
}

/* ---------------------------------------------------------------------- */
/* A participant's copies.                                                  */

static struct cached *cache_slot(struct proc *p, uint32_t key)
{
    uint32_t mask = p->cache_cap - 1, i = (key * 2654435761u) & mask;
    while (p->cache[i].key && p->cache[i].key != key)
        i = (i + 1) & mask;
    return &p->cache[i];
}

static bool cache_grow(struct proc *p)
{
    uint32_t old_cap = p->cache_cap;
    struct cached *old = p->cache;
    uint32_t cap = old_cap ? old_cap * 2 : 16;
    struct cached *fresh = calloc(cap, sizeof *fresh);
    if (!fresh)
        return false;
    p->cache = fresh;
    p->cache_cap = cap;
    for (uint32_t i = 0; i < old_cap; i++)
        if (old[i].key)
            *cache_slot(p, old[i].key) = old[i];
    free(old);
    return true;
}

static void cache_put(struct sim *s, struct proc *p, size_t index, uint32_t gen, ts_ps ready)
{
    uint32_t key = (uint32_t)index + 1;
    if ((p->cache_used + 1) * 2 > p->cache_cap && !cache_grow(p)) {
        s->oom = true; /* reported after the run; the copy is just not kept */
        return;
    }
    struct cached *c = cache_slot(p, key);
    if (!c->key) {
        c->key = key;
        p->cache_used++;
    }
    c->gen = gen;
    c->ready = ready;
}

static const struct cached *cache_get(struct proc *p, size_t index)
{
    if (!p->cache_cap)
        return NULL;
    const struct cached *c = cache_slot(p, (uint32_t)index + 1);
    return c->key ? c : NULL;
}

/* ---------------------------------------------------------------------- */
/* The cost model.                                                          */

static inline ts_ps latency(const struct sim *s, unsigned from_rank, unsigned to_rank)
{
    if (s->sched) /* where each runs now: a woken unbound one may have moved */
        return ts_model_ps(s->cfg->model, ts_sched_cpu(s->sched, from_rank),
                           ts_sched_cpu(s->sched, to_rank));
    return ts_model_ps(s->cfg->model, s->procs[from_rank].pu, s->procs[to_rank].pu);
}

static void add_sharer(struct sim *s, struct line *l, unsigned rank, ts_ps ready)
{
    if (l->nsharers == l->cap) {
        uint32_t cap = l->cap ? l->cap * 2 : 4;
        struct sharer *grown = realloc(l->sharers, cap * sizeof *grown);
        if (!grown) {
            s->oom = true;
            return;
        }
        l->sharers = grown;
        l->cap = cap;
    }
    l->sharers[l->nsharers++] = (struct sharer){rank, ready};
}

/* Misses whose copies arrived by the participant's clock are done. */
static void retire_arrived(struct proc *p)
{
    unsigned kept = 0;
    for (unsigned k = 0; k < p->noutstanding; k++)
        if (p->outstanding[k] > p->clock)
            p->outstanding[kept++] = p->outstanding[k];
    p->noutstanding = kept;
}

/* Stall until every outstanding miss has its copy. */
static void drain(struct proc *p)
{
    for (unsigned k = 0; k < p->noutstanding; k++)
        p->clock = max_ps(p->clock, p->outstanding[k]);
    p->noutstanding = 0;
}

/* A miss whose copy arrives at `arrival`, by a load that need not wait for
 * it: outstanding while fewer than K are, else the participant stalls until
 * the earliest arrives (with K = 1, always: the miss itself). */
static void leave_outstanding(struct sim *s, struct proc *p, ts_ps arrival)
{
    retire_arrived(p);
    if (p->noutstanding + 1 < s->mlp) {
        p->outstanding[p->noutstanding++] = arrival;
        return;
    }
    /* K in flight: the earliest of them arrives first (the new one on a tie) */
    unsigned earliest = 0;
    for (unsigned k = 1; k < p->noutstanding; k++)
        if (p->outstanding[k] < p->outstanding[earliest])
            earliest = k;
    if (p->noutstanding == 0 || arrival <= p->outstanding[earliest]) {
        p->clock = max_ps(p->clock, arrival);
        return;
    }
    p->clock = max_ps(p->clock, p->outstanding[earliest]);
    p->outstanding[earliest] = arrival;
    retire_arrived(p);
}

/* A request for l reaching its home at `at`: served once the home is free,
 * one at a time (docs/model.md, "The cost model"). When it is served. */
static ts_ps home_request(struct sim *s, const struct line *l, ts_ps at)
{
    if (!s->home_service)
        return at;
    ts_ps start = max_ps(at, s->home_busy[l->home]);
    s->home_busy[l->home] = start + s->home_service;
    return start;
}

static void read_line(struct sim *s, struct proc *p, size_t index, bool overlap)
{
    struct line *l = &s->lines[index];
    ts_ps now = p->clock;
    const struct cached *c = cache_get(p, index);
    if (c && c->gen == l->gen) { /* a valid copy: free */
        p->clock = max_ps(now, c->ready);
        return;
    }
    now = home_request(s, l, now);
    ts_ps best = max_ps(now, l->owner_ready) + latency(s, (unsigned)l->owner, p->rank);
    for (uint32_t k = 0; k < l->nsharers; k++) {
        ts_ps at = max_ps(now, l->sharers[k].ready) + latency(s, l->sharers[k].rank, p->rank);
        if (at < best)
            best = at;
    }
    add_sharer(s, l, p->rank, best);
    cache_put(s, p, index, l->gen, best);
    if (overlap)
        leave_outstanding(s, p, best);
    else
        p->clock = best;
}

static void write_line(struct sim *s, struct proc *p, size_t index, bool rmw)
{
    struct line *l = &s->lines[index];
    drain(p); /* the write is ordered after the participant's loads */
    ts_ps now = p->clock;
    const struct cached *c = cache_get(p, index);
    bool exclusive =
        l->owner == (int)p->rank && l->nsharers == 0 && !l->parked && c && c->gen == l->gen;
    ts_ps start = max_ps(now, l->busy_until);
    if (rmw)
        start = max_ps(start, p->stores_done);
    ts_ps cost = 0;
    if (!exclusive) {
        start = home_request(s, l, start);
        if (l->owner != (int)p->rank)
            cost = latency(s, (unsigned)l->owner, p->rank);
        for (uint32_t k = 0; k < l->nsharers; k++)
            if (l->sharers[k].rank != p->rank)
                cost = max_ps(cost, latency(s, l->sharers[k].rank, p->rank));
        l->gen++;
        l->nsharers = 0;
    }
    ts_ps done = max_ps(start + cost, p->stores_done); /* in-order commit */
    p->stores_done = done;
    l->busy_until = done;
    l->owner = (int)p->rank;
    l->owner_ready = done;
    /* the writer sees its own value at once (store forwarding) */
    cache_put(s, p, index, l->gen, rmw ? done : now);
    if (rmw)
        p->clock = done;
}

/* Wake the waiters of a line whose `word` was written at `when`: each
 * reloads from then. With a scheduler, a sleeper is woken only by its own
 * word (its futex), runs again when the scheduler says, and each one
 * woken costs the writer a FUTEX_WAKE: returned. */
static ts_ps wake_line(struct sim *s, size_t index, ts_ps when, const _Atomic uint32_t *word)
{
    struct line *l = &s->lines[index];
    struct proc *q = l->parked, *kept = NULL;
    l->parked = NULL;
    ts_ps cost = 0;
    while (q) {
        struct proc *next = q->next_parked;
        q->next_parked = NULL;
        ts_ps ready = when;
        if (s->sched) {
            if (q->waits_on != word && ts_sched_asleep(s->sched, q->rank, when)) {
                q->next_parked = kept;
                kept = q;
                q = next;
                continue;
            }
            cost += ts_sched_wake(s->sched, q->rank, when, s->cur ? (int)s->cur->rank : -1, &ready);
        }
        q->clock = max_ps(q->clock, ready);
        q->tiebreak = next_random(s);
        heap_push(s, q);
        q = next;
    }
    l->parked = kept;
    return cost;
}

/* ---------------------------------------------------------------------- */
/* The simulated atomics (sim_atomic.h).                                    */

/* The line of a word when it is an event of the running simulation. */
static bool simulated(const _Atomic uint32_t *word, struct sim **sp, size_t *index)
{
    struct sim *s = current;
    if (!s || !s->cur)
        return false;
    const unsigned char *a = (const unsigned char *)word;
    if (a < s->cfg->base || a >= s->cfg->base + s->cfg->size)
        return false;
    *sp = s;
    *index = (size_t)(a - s->cfg->base) >> s->line_shift;
    return true;
}

static bool write_lost(const struct sim *s)
{
    return s->cfg->fault == TOPSYNC_SIM_FAULT_SKIP_ARRIVAL && s->cur->rank == s->cfg->fault_rank;
}

uint32_t ts_sim_load(_Atomic uint32_t *word, memory_order order)
{
    struct sim *s;
    size_t index;
    if (!simulated(word, &s, &index))
        return atomic_load_explicit(word, memory_order_seq_cst);
    event_begin(s, s->cur);
    read_line(s, s->cur, index, order == memory_order_relaxed);
    return atomic_load_explicit(word, memory_order_relaxed); /* one thread: any order */
}

enum write_op { OP_STORE, OP_EXCHANGE, OP_ADD };

/* A write event: its cost, the value, the wake-ups. Returns the old value. */
static uint32_t write_event(_Atomic uint32_t *word, enum write_op op, uint32_t operand)
{
    struct sim *s;
    size_t index;
    if (!simulated(word, &s, &index)) {
        switch (op) {
        case OP_STORE: atomic_store_explicit(word, operand, memory_order_seq_cst); return 0;
        case OP_EXCHANGE: return atomic_exchange_explicit(word, operand, memory_order_seq_cst);
        case OP_ADD: return atomic_fetch_add_explicit(word, operand, memory_order_seq_cst);
        }
    }
    struct proc *p = s->cur;
    event_begin(s, p);
    ts_ps issued = p->clock;
    write_line(s, p, index, op != OP_STORE);
    uint32_t old = atomic_load_explicit(word, memory_order_relaxed); /* one thread: any order */
    if (write_lost(s))
        return old;
    atomic_store_explicit(word, op == OP_ADD ? old + operand : operand, memory_order_relaxed);
    p->clock += wake_line(s, index, issued, word);
    return old;
}

void ts_sim_store(_Atomic uint32_t *word, uint32_t value)
{
    write_event(word, OP_STORE, value);
}

uint32_t ts_sim_exchange(_Atomic uint32_t *word, uint32_t value)
{
    return write_event(word, OP_EXCHANGE, value);
}

uint32_t ts_sim_fetch_add(_Atomic uint32_t *word, uint32_t add)
{
    return write_event(word, OP_ADD, add);
}

bool ts_sim_compare_exchange(_Atomic uint32_t *word, uint32_t *expected, uint32_t desired)
{
    struct sim *s;
    size_t index;
    if (!simulated(word, &s, &index))
        return atomic_compare_exchange_strong_explicit(word, expected, desired,
                                                       memory_order_seq_cst, memory_order_seq_cst);
    struct proc *p = s->cur;
    event_begin(s, p);
    ts_ps issued = p->clock;
    write_line(s, p, index, true); /* a CAS takes the line exclusive, success or not */
    uint32_t old = atomic_load_explicit(word, memory_order_relaxed);
    if (old != *expected || write_lost(s)) {
        *expected = old;
        return false;
    }
    atomic_store_explicit(word, desired, memory_order_relaxed);
    p->clock += wake_line(s, index, issued, word);
    return true;
}

void ts_sim_fence(memory_order order)
{
    struct sim *s = current;
    if (!s || !s->cur) {
        atomic_thread_fence(order);
        return;
    }
    event_begin(s, s->cur);
    drain(s->cur);
}

/* Another participant than `rank` is on its CPU now: the library's
 * co-location check (wait.h) reads where each was last seen at a wait's
 * entry, the scheduler says where each is. */
static bool colocated_now(const struct sim *s, unsigned rank)
{
    unsigned cpu = ts_sched_cpu(s->sched, rank);
    for (unsigned r = 0; r < s->cfg->n; r++)
        if (r != rank && ts_sched_cpu(s->sched, r) == cpu)
            return true;
    return false;
}

/* What participant p's wait of `policy` does, for the scheduler: spin for
 * `pauses` (the library's bound: its start, or what it learned since,
 * below), none when the policy checks co-location and another participant
 * shares its CPU, then spin on, yield or sleep. The pauses become time
 * with the simulated machine's cost of a pause, which the library's
 * settings converted them with too (sim_barrier.c, pause_ns). A
 * block's yields before sleeping are not modelled (docs/model.md section
 * 9). */
static void wait_plan(const struct sim *s, const struct proc *p, const ts_wait *policy,
                      uint32_t *pauses, ts_ps *spin, enum ts_sched_then *then)
{
    *pauses = policy->learn ? ts_spin_cap_learned(p->spin_learned, policy->spin_iterations,
                                                  ts_spin_most(policy))
                            : policy->spin_iterations;
    if (policy->colocation && colocated_now(s, p->rank))
        *pauses = 0;
    /* to the microsecond, as before the simulation fixed the pause at
     * the simulated machine's (sim_barrier.c, pause_ns): then every
     * process converted with the pause it measured, and the rounding kept
     * a bound set in time (4 us, 32 us, a slice) the same in each. Kept so
     * that the figures of docs/model.md stand; a bound set in pauses (256,
     * the floor of 16) takes the simulated pause, at the microsecond. */
    *spin = (ts_ps)(((double)*pauses * ts_wait_pause_ns() + 500.0) / 1000.0) * 1000000;
    *then = policy->kind == TS_WAIT_BLOCK   ? TS_SCHED_SLEEP
            : policy->kind == TS_WAIT_YIELD ? TS_SCHED_YIELD
                                            : TS_SCHED_SPIN_ON;
}

/* After a wait that spun `pauses` (at_once: its first load found the word
 * reached) and ended at p's clock: the library's learning (wait.h,
 * ts_spin_cap_after_catch and ts_spin_cap_after_miss). A spin that caught
 * the word doubles the cap, up to the most; one that ran out sets it to
 * twice the whole wait when that fits within the most, else halves it;
 * never below TS_ADAPTIVE_SPIN_FLOOR. A wait without a spin teaches
 * nothing, nor one of a policy that does not learn (TOPSYNC_SPIN), nor a
 * spin wait (it never runs out). Not modelled: the spin probe (at most
 * 256 us in a barrier's first millisecond, wait.c) and the rule that a
 * long spin ended by a partner now on its CPU was a miss (the co-location
 * check gives no spin there already). */
static void spin_learn(const struct sim *s, struct proc *p, const ts_wait *policy, uint32_t pauses,
                       bool at_once)
{
    if (!policy->learn || !pauses || policy->kind == TS_WAIT_SPIN)
        return;
    ts_ps out = at_once ? -1 : ts_sched_spin_ran_out(s->sched, p->rank);
    uint32_t cap =
        out < 0 ? ts_spin_cap_after_catch(policy, pauses, true)
                : ts_spin_cap_after_miss(
                      policy, pauses,
                      ts_spin_ns(pauses) + (uint64_t)(p->clock > out ? p->clock - out : 0) / 1000);
    p->spin_learned = cap + 1;
}

/* ts_wait_reach's slow path, simulated: the participant spins on its copy,
 * which costs nothing until a write invalidates it; then it reloads. With
 * a scheduler, it holds its CPU while it spins, and may yield or sleep. */
void ts_sim_wait_slow(ts_word *w, uint32_t episode, const ts_wait *policy)
{
    struct sim *s;
    size_t index;
    if (!simulated(&w->value, &s, &index)) {
        while (!ts_reached(atomic_load_explicit(&w->value, memory_order_acquire), episode))
            ts_cpu_relax();
        return;
    }
    struct proc *p = s->cur;
    if (s->cfg->fault == TOPSYNC_SIM_FAULT_SKIP_WAIT && p->rank == s->cfg->fault_rank)
        return;
    ts_ps spin = 0;
    uint32_t pauses = 0;
    enum ts_sched_then then = TS_SCHED_SPIN_ON;
    if (s->sched)
        wait_plan(s, p, policy, &pauses, &spin, &then);
    if (s->sched && s->cfg->no_spin)
        spin = 0, pauses = 0;
    for (bool parked = false;; parked = true) {
        /* acquire, as the real slow path's load */
        if (ts_reached(ts_sim_load(&w->value, memory_order_acquire), episode)) {
            if (s->sched) /* unparked: caught by the spin's first load */
                spin_learn(s, p, policy, pauses, !parked);
            return;
        }
        /* parked right after the load, before anybody else runs: no write
         * can fall between the check and the park */
        struct line *l = &s->lines[index];
        p->next_parked = l->parked;
        l->parked = p;
        p->state = PARKED;
        if (s->sched) {
            p->waits_on = &w->value;
            ts_sched_wait_begin(s->sched, p->rank, p->clock, spin, then);
            spin = -1; /* woken by another word of the line: the same spin goes on */
        }
        switch_away(s, p);
    }
}

/* Nobody sleeps in the simulation (its waits never set TS_SLEEPING). */
void ts_sim_futex_wait(_Atomic uint32_t *addr, uint32_t expected, bool process_shared,
                       uint64_t timeout_ns)
{
    (void)addr, (void)expected, (void)process_shared, (void)timeout_ns;
}

void ts_sim_futex_wake(_Atomic uint32_t *addr, bool process_shared)
{
    (void)addr, (void)process_shared;
}

/* ---------------------------------------------------------------------- */
/* Running.                                                                 */

/* Reading the clock waits for the outstanding misses, as a timer read
 * after a barrier's last load does. */
ts_ps ts_sim_now(void)
{
    if (!current || !current->cur)
        return 0;
    drain(current->cur);
    return current->cur->clock;
}

_Noreturn void ts_sim_stop(void)
{
    struct sim *s = current;
    s->stopped = true;
    struct proc *p = s->cur;
    swap_to(s, &p->ctx, NULL);
    abort(); /* a stopped simulation never resumes its participants */
}

static void proc_main(void)
{
    struct sim *s = current;
    struct proc *p = s->cur;
#ifdef TS_SIM_ASAN
    /* the first participant to run was switched to from the caller's stack */
    if (!s->main_stack_bottom)
        __sanitizer_finish_switch_fiber(NULL, &s->main_stack_bottom, &s->main_stack_size);
    else
        __sanitizer_finish_switch_fiber(NULL, NULL, NULL);
#endif
    s->cfg->body(p->rank, s->cfg->arg);
    if (s->sched)
        ts_sched_done(s->sched, p->rank, p->clock);
    p->state = DONE;
    s->ndone++;
    switch_away(s, p);
    abort(); /* never resumed */
}

static void free_sim(struct sim *s)
{
    ts_sched_destroy(s->sched);
    free(s->home_busy);
    if (s->procs)
        for (unsigned r = 0; r < s->cfg->n; r++) {
            if (s->procs[r].stack_map) {
#ifdef TS_SIM_ASAN
                /* frames left on a stack keep their poison past munmap */
                size_t guard = (size_t)getpagesize();
                __asan_unpoison_memory_region((char *)s->procs[r].stack_map + guard,
                                              s->procs[r].stack_map_size - guard);
#endif
                munmap(s->procs[r].stack_map, s->procs[r].stack_map_size);
            }
            free(s->procs[r].cache);
        }
    if (s->lines)
        for (size_t k = 0; k < s->nlines; k++)
            free(s->lines[k].sharers);
    free(s->procs);
    free(s->heap);
    free(s->lines);
    free(s->outstanding_pool);
}

/* Apart from start_procs: getcontext (the portable switch) returns twice
 * in principle, which would make the loop's variables unsafe there. */
static int make_context(struct proc *p, size_t page)
{
    return ts_context_make(&p->ctx, (char *)p->stack_map + page, TS_SIM_STACK, proc_main);
}

static int start_procs(struct sim *s)
{
    const struct ts_sim_config *c = s->cfg;
    size_t page = (size_t)getpagesize();
    for (unsigned r = 0; r < c->n; r++) {
        struct proc *p = &s->procs[r];
        p->rank = r;
        p->pu = c->pu[r];
        p->outstanding = s->outstanding_pool + (size_t)r * (s->mlp - 1);
        /* a stack with a guard page below it */
        p->stack_map_size = TS_SIM_STACK + page;
        p->stack_map = mmap(NULL, p->stack_map_size, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p->stack_map == MAP_FAILED) {
            p->stack_map = NULL;
            return ts_fail(ENOMEM, "simulation: cannot map the stack of participant %u", r);
        }
        mprotect(p->stack_map, page, PROT_NONE);
        if (make_context(p, page) < 0)
            return ts_fail(EINVAL, "simulation: cannot make the context of participant %u", r);
        p->tiebreak = next_random(s);
        if (s->sched) /* it exists from its creation on */
            p->clock = ts_sched_created(s->sched, r);
        heap_push(s, p);
    }
    return 0;
}

/* The home of lines first touched by participant r: its NUMA node's unit
 * (else its package's, else the machine's, 0), an index below the model's
 * pu_limit, which sizes sim.home_busy. */
static unsigned home_of(const struct sim *s, unsigned r)
{
    const topsync_model_t *m = s->cfg->model;
    unsigned pu = s->cfg->pu[r];
    int unit = m->unit[TOPSYNC_MODEL_NUMA][pu];
    if (unit < 0)
        unit = m->unit[TOPSYNC_MODEL_PACKAGE][pu];
    return unit < 0 ? 0 : (unsigned)unit;
}

int ts_sim_run(const struct ts_sim_config *c, struct ts_sim_stats *stats)
{
    if (current)
        return ts_fail(EINVAL, "simulation: a body may not start another simulation");
    if (!c->line || (c->line & (c->line - 1)))
        return ts_fail(EINVAL, "simulation: line size %zu is not a power of two", c->line);
    if (c->mlp < 1 || c->mlp > TOPSYNC_MODEL_MAX_MLP)
        return ts_fail(EINVAL, "simulation: memory-level parallelism %u; valid: 1 to %u", c->mlp,
                       TOPSYNC_MODEL_MAX_MLP);
    struct sim s;
    memset(&s, 0, sizeof s);
    s.cfg = c;
    s.mlp = c->mlp;
    s.rng = c->seed;
    while ((1ul << s.line_shift) < c->line)
        s.line_shift++;
    s.nlines = (c->size + c->line - 1) / c->line;
    s.procs = calloc(c->n, sizeof *s.procs);
    s.heap = calloc(c->n, sizeof *s.heap);
    s.lines = calloc(s.nlines, sizeof *s.lines);
    s.outstanding_pool = calloc((size_t)c->n * (c->mlp - 1) + 1, sizeof *s.outstanding_pool);
    if (!s.procs || !s.heap || !s.lines || !s.outstanding_pool) {
        free_sim(&s);
        return ts_fail(ENOMEM, "simulation: out of memory for %u participants", c->n);
    }
    s.home_service = c->model ? c->model->home_service_ps : 0;
    if (s.home_service &&
        !(s.home_busy = calloc((size_t)c->model->pu_limit + 1, sizeof *s.home_busy))) {
        free_sim(&s);
        return ts_fail(ENOMEM, "simulation: out of memory for %u participants", c->n);
    }
    for (size_t k = 0; k < s.nlines; k++) {
        unsigned owner = c->first_touch(k, c->arg);
        s.lines[k].owner = (int)(owner < c->n ? owner : 0);
        if (s.home_service)
            s.lines[k].home = home_of(&s, (unsigned)s.lines[k].owner);
    }
    struct ts_sched_config sched_config;
    if (c->sched) {
        sched_config = *c->sched;
        sched_config.chosen = cpu_given;
        sched_config.chosen_arg = &s;
    }
    int rc = c->sched ? ts_sched_create(&s.sched, &sched_config) : 0;
    if (rc == 0)
        rc = start_procs(&s);
    if (rc < 0) {
        free_sim(&s);
        return rc;
    }
    current = &s;
    struct proc *first = heap_pop(&s);
    swap_to(&s, &s.main_ctx, first);
    current = NULL;
    stats->events = s.events;
    stats->nparked = 0;
    for (unsigned r = 0; r < c->n; r++)
        stats->nparked += s.procs[r].state == PARKED;
    stats->outcome = s.stopped ? TS_SIM_STOPPED : s.ndone == c->n ? TS_SIM_DONE : TS_SIM_DEADLOCK;
    memset(&stats->sched, 0, sizeof stats->sched);
    if (s.sched)
        ts_sched_stats(s.sched, &stats->sched);
    bool oom = s.oom;
    free_sim(&s);
    if (oom)
        return ts_fail(ENOMEM, "simulation: out of memory for the caches' bookkeeping");
    return 0;
}
