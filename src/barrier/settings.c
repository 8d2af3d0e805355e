/*
 * A barrier's settings: options, the TOPSYNC_* variables of barriers, the
 * oversubscription probe, the wait policy's numbers, and the call into
 * auto through the chooser select/auto.c registers. docs/design.md
 * sections 2 and 3.
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
#include "base/keywords.h"
#include "topology/topology_private.h"

#ifndef TS_YIELD_OVERSUBSCRIBED
#define TS_YIELD_OVERSUBSCRIBED 16
#endif
#ifndef TS_SPIN_OVERSUBSCRIBED
#define TS_SPIN_OVERSUBSCRIBED 0
#endif
#ifndef TS_SPIN_OVERSUBSCRIBED_DISJOINT
#define TS_SPIN_OVERSUBSCRIBED_DISJOINT 256
#endif

/* ---------------------------------------------------------------------- */
/* Machine facts, read once through hwloc.                                  */

static pthread_once_t machine_once = PTHREAD_ONCE_INIT;
static size_t machine_line_size = 128;
static unsigned machine_cpus = 1;
static unsigned machine_online_cpus = 1; /* the whole machine's (the kernel's slice) */
/* this thread's fixed count (ts_barrier_machine_online_cpus_fix); 0: none */
static TS_TLS_INITIAL_EXEC _Thread_local unsigned online_cpus_fixed = 0;

static void machine_probe(void)
{
    topsync_topology_t *t;
    if (topsync_topology_load(&t) != 0)
        return; /* keep the safe fallbacks */
    machine_line_size = topsync_topology_line_size(t);
    int online = hwloc_bitmap_weight(hwloc_topology_get_topology_cpuset(t->hwloc));
    if (online > 0)
        machine_online_cpus = (unsigned)online;
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (set && hwloc_get_cpubind(t->hwloc, set, HWLOC_CPUBIND_PROCESS) == 0 &&
        !hwloc_bitmap_iszero(set))
        machine_cpus = (unsigned)hwloc_bitmap_weight(set);
    else
        machine_cpus = (unsigned)hwloc_bitmap_weight(hwloc_topology_get_allowed_cpuset(t->hwloc));
    hwloc_bitmap_free(set);
    topsync_topology_destroy(t);
}

size_t ts_barrier_machine_line_size(void)
{
    pthread_once(&machine_once, machine_probe);
    return machine_line_size;
}

unsigned ts_barrier_machine_online_cpus(void)
{
    if (online_cpus_fixed)
        return online_cpus_fixed;
    pthread_once(&machine_once, machine_probe);
    return machine_online_cpus;
}

unsigned ts_barrier_machine_online_cpus_fix(unsigned cpus)
{
    unsigned before = online_cpus_fixed;
    online_cpus_fixed = cpus;
    return before;
}

/* ---------------------------------------------------------------------- */
/* Options and defaults.                                                    */

void topsync_barrier_options_init(topsync_barrier_options_t *o)
{
    if (o)
        memset(o, 0, sizeof *o);
}

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

int ts_barrier_resolve(unsigned n, const topsync_barrier_options_t *o, struct resolved *r)
{
    const char *name = o->algorithm;
    const char *origin = "";
    if (!name) {
        name = ts_getenv("TOPSYNC_BARRIER");
        origin = "TOPSYNC_BARRIER: ";
        if (!name)
            name = "auto";
    }
    int rc = ts_barrier_parse_algorithm(name, &r->alg, origin);
    if (rc < 0)
        return rc;
    r->given_by_env = origin[0] != '\0';
    r->participants = n;
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

void ts_barrier_wait_settings(ts_wait *w, const struct resolved *r, bool process_shared,
                              long spin_override)
{
    topsync_wait_policy_t p = r->wait;
    w->kind = p == TOPSYNC_WAIT_SPIN    ? TS_WAIT_SPIN
              : p == TOPSYNC_WAIT_YIELD ? TS_WAIT_YIELD
                                        : TS_WAIT_BLOCK;
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
    /* With a CPU each, a spin bounded in time (TS_SPIN_NS_DEFAULT, wait.h;
     * it was 4096 pauses, about 100 us on an AMD EPYC), shortened per
     * participant while it keeps failing (the partner is not running: CPUs
     * busy with other work, unbound threads on one CPU). */
    w->spin_iterations = !r->oversubscribed ? ts_wait_pauses_for_ns(TS_SPIN_NS_DEFAULT)
                         : r->disjoint_cpus ? TS_SPIN_OVERSUBSCRIBED_DISJOINT
                                            : TS_SPIN_OVERSUBSCRIBED;
    /* Not bound apart, but few enough to fit the CPUs, and oversubscribed
     * by other processes: spin that much only when no other participant
     * was last seen on this CPU (wait.h, co-location check; unbound pairs
     * of an oversubscribed job). With more participants than CPUs some
     * always share one: no spin, as above. */
    bool apart_unknown = !r->disjoint_cpus && r->fits_cpus && spin_override < 0;
    w->colocation = false;
    if (r->oversubscribed && apart_unknown) {
        w->colocation = true;
        w->spin_iterations = TS_SPIN_OVERSUBSCRIBED_DISJOINT;
    }
    if (spin_override >= 0)
        w->spin_iterations = (uint32_t)spin_override;
    /* TOPSYNC_SPIN fixes the spin: nothing learned then. */
    w->learn = spin_override < 0;
    w->spin_learn_most =
        !r->oversubscribed && w->learn ? ts_wait_pauses_for_ns(TS_SPIN_NS_MOST) : 0;
    /* As few as the CPUs, not bound apart, and few enough that a waiter
     * scans their CPUs: with none on its CPU, the spin may grow to a
     * scheduler slice (wait.h, TS_SLICE_NS_BASE); past the first 32 us it
     * keeps the deadline and the idle hook. */
    w->spin_unclocked = 0;
    if (!r->oversubscribed && apart_unknown && r->participants <= TS_COLOCATION_PEERS_MOST) {
        w->colocation = true;
        w->spin_learn_most =
            ts_wait_pauses_for_ns(ts_wait_slice_ns(ts_barrier_machine_online_cpus()));
        w->spin_unclocked = ts_wait_pauses_for_ns(TS_SPIN_NS_MOST);
    }
    /* Yields only when the participants share CPUs (one may hand the CPU
     * to the awaited one). With a CPU each, the CPU a yield gives up goes
     * to other work, for its whole time slice (issue 35: milliseconds with
     * a CPU hog), and a futex sleep is woken at once: none. */
    w->yield_iterations = r->oversubscribed ? TS_YIELD_OVERSUBSCRIBED : 0;
    if (w->spin_unclocked)
        w->yield_iterations = TS_YIELD_OVERSUBSCRIBED; /* when co-located (wait.h) */
    w->process_shared = process_shared;
}

/* TOPSYNC_SPIN: spin iterations before yielding or sleeping; -1 if unset. */
int ts_barrier_spin_from_env(long *out)
{
    *out = -1;
    return ts_env_whole("TOPSYNC_SPIN", 0, 100000000, "iterations", out) < 0 ? -EINVAL : 0;
}

/* TOPSYNC_POLL: how a leader waits for its members (ts_wait_all): scan
 * (the default) or ordered; *ordered is false when unset. */
int ts_barrier_poll_from_env(bool *ordered)
{
    static const ts_keyword_t words[] = {
        {"scan", 0, false},
        {"ordered", 1, false},
        {NULL, 0, false},
    };
    const char *v = ts_getenv("TOPSYNC_POLL");
    *ordered = false;
    if (!v)
        return 0;
    const ts_keyword_t *w = ts_keyword_find(words, v);
    if (!w)
        return ts_fail(EINVAL,
                       "TOPSYNC_POLL='%s' is not valid; valid: scan (read every member "
                       "on each pass, the default), ordered (wait for one member after "
                       "another)",
                       v);
    *ordered = w->value == 1;
    return 0;
}

/* TOPSYNC_TIMEOUT: seconds (0: none); *out is 0 when unset. */
int ts_barrier_timeout_from_env(double *out)
{
    *out = 0;
    return ts_env_seconds("TOPSYNC_TIMEOUT", 1e6, out) < 0 ? -EINVAL : 0;
}

int ts_barrier_environment_check(bool barrier_mpi_valid)
{
    struct parsed_algorithm alg;
    const char *name = ts_getenv("TOPSYNC_BARRIER");
    if (name && !(barrier_mpi_valid && !strcasecmp(name, "mpi")) &&
        ts_barrier_parse_algorithm(name, &alg, "TOPSYNC_BARRIER: ") < 0)
        return -EINVAL;
    const char *wait = ts_getenv("TOPSYNC_WAIT");
    topsync_wait_policy_t policy;
    if (wait && topsync_wait_policy_parse(wait, &policy) < 0)
        return ts_fail(EINVAL, "TOPSYNC_WAIT: %s", topsync_error_message());
    long spin;
    if (ts_barrier_spin_from_env(&spin) < 0)
        return -EINVAL;
    double timeout;
    if (ts_barrier_timeout_from_env(&timeout) < 0)
        return -EINVAL;
    bool ordered;
    if (ts_barrier_poll_from_env(&ordered) < 0)
        return -EINVAL;
    enum ts_reactive_mode reactive;
    uint32_t every;
    if (ts_reactive_from_env(&reactive, &every) < 0)
        return -EINVAL;
    return 0;
}

/* Resolve "auto" (src/select/auto.c) into r, and say how in b->explain. */
void ts_barrier_choose_auto(topsync_barrier_t *b, const topsync_barrier_options_t *opts,
                            const topsync_groups_t *groups, const topsync_model_t *model,
                            struct resolved *r)
{
    struct ts_auto_request req = {.n = b->n,
                                  .topology = opts->topology,
                                  .cpusets = opts->cpusets,
                                  .groups = groups,
                                  .oversubscribed = r->oversubscribed,
                                  .processes = opts->process_shared != 0 || b->attached,
                                  .wait = r->wait,
                                  .model = model};
    struct ts_auto_choice choice = {.candidate = ""};
    /* acquire: pairs with the release in ts_barrier_set_chooser */
    const struct ts_barrier_chooser *c = atomic_load_explicit(&chooser, memory_order_acquire);
    if (c) {
        c->choose(&req, &choice);
    } else { /* never in the library: auto.c registers itself at load */
        snprintf(choice.algorithm, sizeof choice.algorithm, "dissemination");
        choice.wait = TOPSYNC_WAIT_DEFAULT;
        snprintf(choice.explain, sizeof choice.explain,
                 "rules: dissemination (no chooser "
                 "registered)");
    }
    struct parsed_algorithm alg;
    if (ts_barrier_parse_algorithm(choice.algorithm, &alg, "") < 0 || !alg.algo) {
        /* auto's names are the library's own: never happens */
        snprintf(choice.explain, sizeof choice.explain,
                 "rules: dissemination (auto chose "
                 "'%s', which is not an algorithm)",
                 choice.algorithm);
        ts_barrier_parse_algorithm("dissemination", &alg, "");
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
    struct parsed_algorithm other;
    b->auto_candidate[0] = '\0';
    if (choice.candidate[0] && ts_barrier_parse_algorithm(choice.candidate, &other, "") == 0 &&
        other.algo && other.algo != alg.algo)
        snprintf(b->auto_candidate, sizeof b->auto_candidate, "%s", choice.candidate);
}
