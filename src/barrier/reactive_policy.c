/*
 * When a reactive barrier switches: participant 0 times windows of
 * episodes (one clock read per check_mask + 1 episodes), keeps the faster
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

/*
 * The constants, and why (none is fitted to a measurement of ours):
 *  - a window lasts at least WINDOW_NS: long enough that the clock read
 *    (~20-50 ns, vDSO) costs nothing, and that an idle window holds
 *    thousands of episodes; short enough that a busy node's episodes of a
 *    millisecond still give one every few scheduler slices;
 *  - a probe must win by MARGIN (hysteresis: two configurations within
 *    noise of each other do not flap);
 *  - the gap between probes doubles while probes lose, from GAP_MIN to
 *    GAP_MAX windows: a probe of a configuration twice as slow then costs
 *    at most 1/(GAP_MAX + 1), 1.5% of the episodes (Lim and Agarwal's
 *    "capped" cost of being wrong);
 *  - a window JUMP times as costly as the last one on the same
 *    configuration probes at once (a phase change: neighbours started).
 */
enum { WINDOW_NS = 2000000, GAP_MIN = 4, GAP_MAX = 64 };
static const double MARGIN = 0.10, JUMP = 1.5;

/* TOPSYNC_VERBOSE: one line per switch (and per probe at 2) */
static void say(const topsync_barrier_t *b, uint32_t episode, const ts_reactive_event *ev)
{
    static const char *const why[] = {
        [TS_REACTIVE_SWITCH] = "measured faster",
        [TS_REACTIVE_PROBE] = "a probe",
        [TS_REACTIVE_PROBE_JUMP] = "a probe: the cost per episode jumped",
        [TS_REACTIVE_PROBE_LOST] = "back: the probe was not faster",
    };
    const topsync_barrier_t *f = b->reactive->config[ev->from], *t = b->reactive->config[ev->to];
    fprintf(stderr,
            "topsync: barrier of %u participants, episode %u: %s/%s -> %s/%s (%s: %.0f ns per "
            "episode, then %.0f ns; TOPSYNC_REACTIVE)\n",
            b->n, episode, f->name, topsync_barrier_wait_policy_name(f), t->name,
            topsync_barrier_wait_policy_name(t), why[ev->kind], ev->from_ns, ev->to_ns);
}

unsigned ts_reactive_policy_step(ts_reactive_policy *p, unsigned nconfigs, unsigned now, uint64_t t,
                                 uint32_t episode, ts_reactive_event *event)
{
    event->kind = TS_REACTIVE_NONE;
    if (!p->window_ns || episode == p->window_episode) {
        p->window_ns = t;
        p->window_episode = episode;
        return now;
    }
    if (t - p->window_ns < WINDOW_NS)
        return now;
    double per = (double)(t - p->window_ns) / (double)(uint32_t)(episode - p->window_episode);
    p->window_ns = t;
    p->window_episode = episode;
    if (!p->measured_once) { /* threads starting, caches cold */
        p->measured_once = true;
        p->home = now;
        p->gap = GAP_MIN;
        return now;
    }
    if (p->probing) {
        p->probing = false;
        p->since = 0;
        double home_ns = p->cost_ns[p->home];
        p->cost_ns[now] = per;
        *event = (ts_reactive_event){TS_REACTIVE_PROBE_LOST, now, p->home, per, home_ns};
        if (per < home_ns * (1 - MARGIN)) {
            *event = (ts_reactive_event){TS_REACTIVE_SWITCH, p->home, now, home_ns, per};
            p->home = now;
            p->gap = GAP_MIN;
            return now;
        }
        p->gap = p->gap * 2 > GAP_MAX ? GAP_MAX : p->gap * 2;
        return p->home;
    }
    double before = p->cost_ns[now];
    p->cost_ns[now] = per;
    bool jumped = before > 0 && per > before * JUMP;
    if (++p->since < p->gap && !jumped)
        return now;
    p->probing = true;
    unsigned other = (now + 1) % nconfigs;
    *event = (ts_reactive_event){jumped ? TS_REACTIVE_PROBE_JUMP : TS_REACTIVE_PROBE, now, other,
                                 before, per};
    return other;
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
        ts_reactive_policy_step(&rx->policy, rx->nconfigs, now, ts_monotonic_ns(), episode, &ev);
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
