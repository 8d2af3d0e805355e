/*
 * When a reactive barrier switches: participant 0 times windows of
 * episodes (one clock read per check_mask + 1 episodes, 1 to 64 as the
 * episodes' cost says), keeps the faster
 * configuration, probes the other now and then, and at once when its own
 * cost jumps (a node that became busy). TOPSYNC_REACTIVE. docs/design.md
 * section 10.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "barrier/barrier_private.h"
#include "barrier/reactive.h"
#include "base/clock.h"
#include "base/env.h"
#include "base/error.h"
#include "wait/wait.h"

/*
 * The constants, and why (none is fitted to a measurement of ours):
 *  - a window lasts at least WINDOW_SLICES of the kernel's time slice
 *    (ts_wait_slice_ns: 1.5 ms on 2 CPUs, 3 ms from 8 on) and 64 episodes:
 *    a busy node's windows then hold several slices of every neighbour,
 *    so that whether the participants happened to be co-scheduled averages
 *    out, and the clock read (~20-50 ns, vDSO) costs nothing;
 *  - a configuration's cost is the median of its last TS_REACTIVE_HISTORY
 *    (5) windows: one window behind a neighbour's whole slice is an
 *    outlier, not a new cost;
 *  - a probe must win by MARGIN against that median in CONFIRM windows in
 *    a row (hysteresis: two configurations within noise of each other do
 *    not flap). Beside busy processes one window's cost varies by 1.5-2.5x
 *    (docs/results.md), so one lucky window of the other often beat the
 *    median by the margin: 16-55 switches per command between two
 *    configurations of the same cost. Windows of costs drawn with such a
 *    spread (unit.test_reactive, test_noisy) show what the two changes
 *    do: 3 windows and 1 to win switched 68 times in 2000 windows of equal
 *    costs and spent 22% of them on a configuration 1.2x as slow; 5 and 2
 *    switch 10 times and spend 11% there (with JUMPS below). Each costs
 *    one more window to react (design.md 10.3);
 *  - the gap between probes doubles while probes lose, from GAP_MIN to
 *    GAP_MAX windows: a probe of a configuration a thousand times as slow
 *    (a futex sleep beside a CPU hog, against a spin that catches the
 *    partner) then costs at most one window in GAP_MAX + 1 of the wall
 *    time, 1.5% (Lim and Agarwal's bounded cost of being wrong);
 *  - JUMPS windows in a row JUMP times as costly as the home's median
 *    probe before the gap is over (a phase change: neighbours started),
 *    but not before GAP_MIN windows, so that noise cannot make probes
 *    frequent either. JUMPS is 3, a majority of the 5 windows of history,
 *    and the probe must beat the median of those three alone: a whole
 *    window of the new phase even when the first of them straddled the
 *    change. The median of all five was a majority's too, but with the
 *    straddling window among the three it was that window's, a mix of
 *    both phases; the probe lost against it, the home's next window put
 *    its median in the new phase, where no window is a jump, and the next
 *    probe came after the gap: 70 windows to follow a phase change
 *    (unit.test_reactive, test_straddle). At JUMPS 2 the median was the
 *    old phase's. Reacting takes 3 + CONFIRM windows (unit.test_reactive
 *    counts them), 30 ms on 2 CPUs, 60 ms from 8 on. A jump probes the
 *    robust configuration (TS_REACTIVE_ROBUST), the one for a busy node,
 *    and never from it: there a busier node is no reason to try one made
 *    for a quieter one, and beside busy processes its windows jump by
 *    noise alone (4 bound threads beside 4 busy processes: 31 jump
 *    probes of a yielding configuration in 13 barriers of 250 ms, each
 *    4 episodes of a tick, where the gap allowed 4 probes). The gap's
 *    probes still try the others, so a node that became quiet is seen;
 *  - after a change (a probe begins, or a lost one goes back) no window is
 *    timed until SETTLE episodes have run on the new configuration. A
 *    decision at episode j changes episodes from j + 1 on, so a window
 *    started there timed episode j on the old configuration
 *    (unit.test_reactive, test_settle); and the first episode on the new
 *    one pays for what the old one left (SETTLE 1, not 0: from the
 *    mechanism; neither the test nor the commands below tell the two
 *    apart): yields and spins had used the participants' share of their
 *    CPUs, and EEVDF keeps that debt (a negative lag, bounded by two slices
 *    or a tick, update_entity_lag) across their sleeps, so the busy
 *    neighbours run first. When an episode lasts a tick (4 bound threads yielding beside 4
 *    busy processes here: 4 ms), a window is two episodes, just those two:
 *    probes of the robust configuration measured the yielding one's 4 ms
 *    and lost, where it alone takes 0.3 ms. The first switch of such a
 *    barrier came at episode 31-448 (median 179) in 4 commands, with the
 *    settling at 32-157 (median 58); settling for a window's time as well
 *    gave 36-109, no better for a window more per probe (docs/results.md,
 *    "A probe timed its own switch").
 */
enum { WINDOW_SLICES = 4, GAP_MIN = 4, GAP_MAX = 64, JUMPS = 3, CONFIRM = 2, SETTLE = 1 };
static const double MARGIN = 0.10, JUMP = 1.5;

static double median_cost(const double cost[TS_REACTIVE_HISTORY])
{
    double v[TS_REACTIVE_HISTORY];
    unsigned n = 0;
    for (unsigned i = 0; i < TS_REACTIVE_HISTORY; i++)
        if (cost[i] > 0) {
            unsigned k = n++;
            for (; k > 0 && v[k - 1] > cost[i]; k--) /* insertion: keep v sorted */
                v[k] = v[k - 1];
            v[k] = cost[i];
        }
    return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void remember(double cost[TS_REACTIVE_HISTORY], double per)
{
    for (unsigned i = TS_REACTIVE_HISTORY - 1; i > 0; i--)
        cost[i] = cost[i - 1];
    cost[0] = per;
}

/* A change decided at `episode` runs from episode + 1: the next window
 * starts once SETTLE episodes ran on it (above). */
static void settle_after(ts_reactive_policy *p, uint32_t episode)
{
    p->settling = true;
    p->settle_episode = episode + 1 + SETTLE;
}

uint64_t ts_reactive_window_ns(unsigned online_cpus)
{
    return WINDOW_SLICES * ts_wait_slice_ns(online_cpus);
}

/* TOPSYNC_VERBOSE: one line per switch (and per probe at 2) */
static void say(const topsync_barrier_t *b, uint32_t episode, const ts_reactive_event *ev)
{
    const topsync_barrier_t *f = b->reactive->config[ev->from], *t = b->reactive->config[ev->to];
    char what[160];
    switch (ev->kind) {
    case TS_REACTIVE_SWITCH:
        snprintf(what, sizeof what, "measured faster: %.0f ns per episode against %.0f ns",
                 ev->to_ns, ev->from_ns);
        break;
    case TS_REACTIVE_PROBE_LOST:
        snprintf(what, sizeof what, "back: the probe took %.0f ns per episode, against %.0f ns",
                 ev->from_ns, ev->to_ns);
        break;
    default:
        snprintf(what, sizeof what,
                 "a probe%s: %.0f ns per episode in the last window, %.0f ns "
                 "typically",
                 ev->kind == TS_REACTIVE_PROBE_JUMP ? " (the cost jumped)" : "", ev->to_ns,
                 ev->from_ns);
        break;
    }
    fprintf(stderr,
            "topsync: barrier of %u participants, episode %u: %s/%s -> %s/%s (%s; "
            "TOPSYNC_REACTIVE)\n",
            b->n, episode, f->name, topsync_barrier_wait_policy_name(f), t->name,
            topsync_barrier_wait_policy_name(t), what);
}

unsigned ts_reactive_policy_step(ts_reactive_policy *p, unsigned nconfigs, unsigned now, uint64_t t,
                                 uint32_t episode, ts_reactive_event *event)
{
    event->kind = TS_REACTIVE_NONE;
    if (p->settling) { /* the window starts at the first decision past it */
        p->settling = (int32_t)(episode - p->settle_episode) < 0;
        p->window_ns = t;
        p->window_episode = episode;
        return now;
    }
    if (!p->window_ns || episode == p->window_episode) {
        p->window_ns = t;
        p->window_episode = episode;
        return now;
    }
    if (t - p->window_ns < p->window_min_ns)
        return now;
    double per = (double)(t - p->window_ns) / (double)(uint32_t)(episode - p->window_episode);
    p->last_ns = per;
    p->window_ns = t;
    p->window_episode = episode;
    if (!p->measured_once) { /* threads starting, caches cold */
        p->measured_once = true;
        p->home = now;
        /* a gap the last barrier of this shape reached (reactive_memory.c) */
        p->gap = p->first_gap > GAP_MIN ? p->first_gap : GAP_MIN;
        return now;
    }
    double home_ns = median_cost(p->cost_ns[p->home]);
    if (p->probing) {
        remember(p->cost_ns[now], per);
        bool wins = per < home_ns * (1 - MARGIN);
        if (wins && p->probing < CONFIRM) { /* won a window: it goes on */
            p->probing++;
            return now;
        }
        p->probing = 0;
        p->since = 0;
        p->jumps = 0;
        if (wins) {
            *event = (ts_reactive_event){TS_REACTIVE_SWITCH, p->home, now, home_ns, per};
            p->home = now;
            p->gap = GAP_MIN;
            /* the new home's history is this probe's windows alone: older
             * ones, from another phase, would not be its cost now */
            double *h = p->cost_ns[now];
            for (unsigned i = CONFIRM; i < TS_REACTIVE_HISTORY; i++)
                h[i] = 0;
            return now;
        }
        *event = (ts_reactive_event){TS_REACTIVE_PROBE_LOST, now, p->home, per, home_ns};
        p->gap = p->gap * 2 > GAP_MAX ? GAP_MAX : p->gap * 2;
        settle_after(p, episode);
        return p->home;
    }
    remember(p->cost_ns[now], per);
    /* a jump says the node got busier: from the robust configuration, the
     * one for a busy node, it probes nothing (above) */
    p->jumps = home_ns > 0 && per > home_ns * JUMP && now != TS_REACTIVE_ROBUST ? p->jumps + 1 : 0;
    bool jumped = p->jumps >= JUMPS && p->since + 1 >= GAP_MIN;
    if (++p->since < p->gap && !jumped)
        return now;
    p->probing = 1;
    /* after a jump the robust one; else the others in turn, the last
     * configuration first (the candidate of online tuning, when there is
     * one; else the robust one) */
    unsigned other;
    if (jumped) {
        other = TS_REACTIVE_ROBUST;
        /* the home's cost: the jump's windows alone (above) */
        for (unsigned i = JUMPS; i < TS_REACTIVE_HISTORY; i++)
            p->cost_ns[now][i] = 0;
    } else {
        other = (p->probe_next + nconfigs - 1) % nconfigs;
        if (other == now)
            other = (other + nconfigs - 1) % nconfigs;
        p->probe_next = other; /* the next probe: the one before it, in turn */
    }
    *event = (ts_reactive_event){jumped ? TS_REACTIVE_PROBE_JUMP : TS_REACTIVE_PROBE, now, other,
                                 home_ns, per};
    settle_after(p, episode);
    return other;
}

/* Participant 0 decides every k episodes, k a power of two from 1 to 64,
 * the least whose k episodes last CHECK_NS: at 64 (episodes of 1 us or
 * less) its clock read, 20-50 ns, costs under 0.1% of the time, and with
 * episodes of milliseconds (a busy node, or yields beside other work) a
 * window still ends once its least time is past. Deciding only every 64
 * episodes made such windows 64 episodes long: 128 ms at 2 ms an episode,
 * and a barrier took 0.5-1.5 s to leave a configuration 100 times as slow
 * as the other (docs/results.md, the policy's reaction). */
#define CHECK_NS 64000.0

uint32_t ts_reactive_check_mask(double per_ns)
{
    uint32_t k = 1;
    while (k < 64 && (double)k * per_ns < CHECK_NS)
        k <<= 1;
    return k - 1;
}

unsigned ts_reactive_decide(topsync_barrier_t *b, uint32_t episode, unsigned now)
{
    ts_reactive *rx = b->reactive;
    if (rx->mode == TS_REACTIVE_EVERY) {
        /* relaxed: a count for topsync_barrier_switches, nothing behind it */
        atomic_fetch_add_explicit(&rx->shared->switches, 1, memory_order_relaxed);
        return (now + 1) % rx->nconfigs;
    }
    ts_reactive_event ev;
    unsigned next =
        ts_reactive_policy_step(rx->policy, rx->nconfigs, now, ts_monotonic_ns(), episode, &ev);
    if (rx->policy->last_ns > 0)
        rx->check_mask = ts_reactive_check_mask(rx->policy->last_ns);
    /* relaxed: counts, as above */
    if (ev.kind == TS_REACTIVE_SWITCH)
        atomic_fetch_add_explicit(&rx->shared->switches, 1, memory_order_relaxed);
    else if (ev.kind == TS_REACTIVE_PROBE || ev.kind == TS_REACTIVE_PROBE_JUMP)
        atomic_fetch_add_explicit(&rx->shared->probes, 1, memory_order_relaxed);
    if (ev.kind != TS_REACTIVE_NONE && rx->verbose >= (ev.kind == TS_REACTIVE_SWITCH ? 1 : 2))
        say(b, episode, &ev);
    return next;
}

int ts_reactive_from_env(enum ts_reactive_mode *mode, uint32_t *every)
{
    const char *v = ts_getenv("TOPSYNC_REACTIVE");
    *mode = TS_REACTIVE_ON;
    *every = 0;
    if (!v || !strcasecmp(v, "on"))
        return 0;
    if (!strcasecmp(v, "off")) {
        *mode = TS_REACTIVE_OFF;
        return 0;
    }
    long n;
    if (!strncasecmp(v, "every:", 6) && ts_env_parse_whole(v + 6, 1, 1L << 16, &n) &&
        (n & (n - 1)) == 0) {
        *mode = TS_REACTIVE_EVERY;
        *every = (uint32_t)n;
        return 0;
    }
    return ts_fail(EINVAL,
                   "TOPSYNC_REACTIVE='%s' is not valid; valid: on (the default: auto's "
                   "barriers move to another configuration when it is faster), off (keep "
                   "the first choice), every:N (tests: switch every N episodes, N a power "
                   "of two from 1 to 65536)",
                   v);
}
