/*
 * The simulator's OS scheduler (src/model/sim_sched.c, docs/model.md
 * section 9), rule by rule, on tiny cases whose answers are computed by
 * hand in the comments: two tasks of one CPU take turns by slice; a
 * sleeper comes back with exactly the lag it left with (EEVDF's
 * place_entity, the lag inflated by (n + 1) / n, the running task's time
 * counted first, when it arrives on its run queue), charged the CPU time
 * of its sleep; a spin keeps its end when the CPU's accounts are brought
 * up to date; a woken task preempts the running one only when that one is
 * past the mean, weighed when it arrives (during the waker's call when
 * it is woken onto the waker's own CPU); a broadcast wakes its sleepers
 * onto as many idle CPUs; a wakee goes to its waker's CPU when
 * wake_affine's loads say so; a slice ends at a timer tick, and a wake-up
 * past it chooses again; the CPU takes the eligible task of earliest
 * virtual deadline, and a task given its CPU back keeps what was left of
 * its slice; a task that sleeps while not eligible stays queued, counted
 * in the mean, until it is chosen or woken, and leaves or comes back with
 * no credit (DELAY_DEQUEUE, DELAY_ZERO), where it slept; and so a task that sleeps briefly and often gets its fair
 * share beside a busy neighbour, not more. And the periodic balancer: an
 * idle CPU pulls a task when cache heat and failed turns allow; an
 * overloaded one pulls by load, a task's load halved per failed turn; CPUs
 * within 117% of each other's load are left alone. And participants
 * created one after another exist only from their creation, each joining
 * as a new task; the time with the most participants on one CPU being
 * 4, 3, ... is counted from the last creation to the first return. Under CFS (kernels before 6.6): two tasks take turns by
 * their share of the latency; a woken task preempts only a holder ahead
 * of it by more than the wake-up granularity, else waits for that
 * holder's share, recomputed with it counted; a long sleeper comes back
 * half a latency behind, a new task a share ahead.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "model/sim_sched.h"

#define US ((ts_ps)1000000) /* a microsecond in ps */
#define SLICE (1000 * US)

/* A scheduler of ncpus CPUs with nprocs participants starting on cpu[]:
 * a slice of SLICE, a tick of 1 ps (a slice ends when it is spent;
 * test_tick has Linux's 4 ms), no costs; callers set the rest. */
static struct ts_sched_config config(unsigned ncpus, const unsigned *cpu, unsigned nprocs)
{
    return (struct ts_sched_config){
        .ncpus = ncpus, .cpu = cpu, .nprocs = nprocs, .slice = SLICE, .tick = 1, .seed = 1};
}

static struct ts_sched *create(const struct ts_sched_config *c)
{
    struct ts_sched *s = NULL;
    CHECK_EQ(ts_sched_create(&s, c), 0);
    return s;
}

static struct ts_sched *make_on(unsigned ncpus, bool unbound, unsigned nprocs,
                                const unsigned *noise, ts_ps switch_cost, ts_ps wake_latency,
                                ts_ps tick)
{
    static const unsigned on_cpu0[4] = {0, 0, 0, 0};
    struct ts_sched_config c = config(ncpus, on_cpu0, nprocs);
    c.noise = noise;
    c.unbound = unbound;
    c.switch_cost = switch_cost;
    c.wake_latency = c.wake_latency_busy = wake_latency;
    c.tick = tick;
    return create(&c);
}

/* nprocs participants on one CPU; a tick of 1 ps, so that a slice ends
 * when it is spent (test_tick has Linux's 4 ms), and lags are bounded at
 * two slices, more than any below */
static struct ts_sched *make(unsigned nprocs, const unsigned *noise, ts_ps switch_cost,
                             ts_ps wake_latency)
{
    return make_on(1, false, nprocs, noise, switch_cost, wake_latency, 1);
}

/* Two participants on one CPU, nothing else: p0 (considered first on the
 * tie at 0) runs [0, S); p1 asks at 0 and is told S; at S the CPU takes
 * the eligible one of earlier deadline, p1, which runs after the switch,
 * from S + switch; p0 asking at S is told p1's slice end, 2S + switch. */
static void test_alternate_by_slice(void)
{
    const ts_ps sw = 2 * US;
    struct ts_sched *s = make(2, NULL, sw, 0);
    CHECK_EQ(ts_sched_gate(s, 0, 0), 0);
    CHECK_EQ(ts_sched_gate(s, 1, 0), SLICE);
    CHECK_EQ(ts_sched_gate(s, 1, SLICE), SLICE + sw);
    CHECK_EQ(ts_sched_gate(s, 0, SLICE), 2 * SLICE + sw);
    CHECK_EQ(ts_sched_gate(s, 0, 2 * SLICE + sw), 2 * SLICE + 2 * sw);
    /* three times a participant got the CPU, as schedstat counts them: p0
     * at 0 after no wait, p1 at S + switch after waiting since 0, p0 at
     * 2S + 2 switches after waiting since it left at S */
    struct ts_sched_stats st;
    ts_sched_stats(s, &st);
    CHECK_EQ(st.runs, 3);
    CHECK_EQ(st.runqueue_wait, (SLICE + sw) + (SLICE + 2 * sw));
    ts_sched_destroy(s);
}

/* Two participants on one CPU, no costs. p0 runs [0, S). At S p1 (virtual
 * time 0) takes the CPU and at once sleeps: its lag is the mean of both,
 * S/2, less its own 0: S/2. p0 runs from S; at 1.5 S p1 is woken. p0's
 * virtual time is counted to then, 1.5 S, before p1 is placed: at 1.5 S
 * less its lag inflated by (1 + 1) / 1, so 0.5 S; the mean of both is
 * then S, and p1 is again S/2 behind it, the lag it slept with. (Placed
 * at the mean less S/2, as before the rule, it would be S and 1/4 S
 * behind: each sleep would forgive half its lag. With p0's time not
 * counted first, at 0.5 S less S: a whole slice ahead of its due.) p0,
 * past the mean, is preempted at once. */
static void test_lag_kept_across_sleep(void)
{
    struct ts_sched *s = make(2, NULL, 0, 0);
    CHECK_EQ(ts_sched_gate(s, 0, 0), 0);
    CHECK_EQ(ts_sched_gate(s, 1, SLICE), SLICE);
    ts_sched_wait_begin(s, 1, SLICE, 0, TS_SCHED_SLEEP);
    CHECK(ts_sched_asleep(s, 1, SLICE));
    CHECK_EQ(ts_sched_gate(s, 0, SLICE), SLICE);
    ts_ps ready = -1;
    ts_sched_wake(s, 1, SLICE + SLICE / 2, -1, &ready);
    CHECK_EQ(ready, SLICE + SLICE / 2);
    CHECK_EQ(ts_sched_gate(s, 1, SLICE + SLICE / 2), SLICE + SLICE / 2);
    CHECK_EQ(ts_sched_vruntime(s, 0), SLICE + SLICE / 2);
    CHECK_EQ(ts_sched_vruntime(s, 1), SLICE / 2);
    /* p1 now runs a whole slice, [1.5 S, 2.5 S), to virtual time 1.5 S,
     * level with p0; on that tie p0, not running, takes the CPU */
    CHECK_EQ(ts_sched_gate(s, 0, SLICE + SLICE / 2), 2 * SLICE + SLICE / 2);
    CHECK_EQ(ts_sched_gate(s, 0, 2 * SLICE + SLICE / 2), 2 * SLICE + SLICE / 2);
    ts_sched_destroy(s);
}

/* A sleep costs the sleeper CPU time of its own (its way into the futex
 * wait and back out), charged when it sleeps: as in
 * test_lag_kept_across_sleep, but with a sleep costing 100 us. p1 takes
 * the CPU at S and sleeps at once: charged 100 us, its lag is the mean
 * (S + 100 us) / 2 less its 100 us, S/2 - 50 us. Woken at 1.5 S, it is
 * placed at p0's 1.5 S less that lag doubled: S/2 + 100 us. (Uncharged,
 * at S/2: a sleeper beside a busy task would get the CPU time of its
 * sleeps free, more than its fair share.) */
static void test_sleep_is_charged(void)
{
    static const unsigned on_cpu0[2] = {0, 0};
    struct ts_sched_config c = config(1, on_cpu0, 2);
    c.sleep_cpu = 100 * US;
    struct ts_sched *s = create(&c);
    CHECK_EQ(ts_sched_gate(s, 0, 0), 0);
    CHECK_EQ(ts_sched_gate(s, 1, SLICE), SLICE);
    ts_sched_wait_begin(s, 1, SLICE, 0, TS_SCHED_SLEEP);
    CHECK(ts_sched_asleep(s, 1, SLICE));
    CHECK_EQ(ts_sched_vruntime(s, 1), 100 * US);
    ts_ps ready;
    ts_sched_wake(s, 1, SLICE + SLICE / 2, -1, &ready);
    CHECK_EQ(ts_sched_gate(s, 1, ready), SLICE + SLICE / 2);
    CHECK_EQ(ts_sched_vruntime(s, 1), SLICE / 2 + 100 * US);
    ts_sched_destroy(s);
}

/* Two participants on one CPU, no costs. p0 sleeps at 0 with no lag and p1
 * takes the CPU; at 10 us p1 starts waiting, spinning for 100 us before it
 * sleeps. At 50 us p0 is woken: placed level with p1 (no lag), it does not
 * preempt (p1 is not past the mean), and waits. p1's spin still ends at
 * 110 us, when it sleeps and p0 runs; the wake-up's accounting (p1's CPU
 * time counted to 50 us) must not start the spin again from 50 us, which
 * would end it at 150 us. */
static void test_spin_keeps_its_end(void)
{
    struct ts_sched *s = make(2, NULL, 0, 0);
    CHECK_EQ(ts_sched_gate(s, 0, 0), 0);
    ts_sched_wait_begin(s, 0, 0, 0, TS_SCHED_SLEEP);
    CHECK_EQ(ts_sched_gate(s, 1, 0), 0);
    ts_sched_wait_begin(s, 1, 10 * US, 100 * US, TS_SCHED_SLEEP);
    ts_ps ready;
    ts_sched_wake(s, 0, 50 * US, -1, &ready);
    CHECK_EQ(ts_sched_gate(s, 0, 50 * US), 110 * US);
    CHECK_EQ(ts_sched_vruntime(s, 0), 50 * US);
    CHECK(!ts_sched_asleep(s, 1, 109 * US));
    CHECK(ts_sched_asleep(s, 1, 110 * US));
    CHECK_EQ(ts_sched_gate(s, 0, 110 * US), 110 * US);
    ts_sched_destroy(s);
}

/* A woken task preempts the running one when that one is past the mean
 * (no longer eligible), after the wake-up latency and a switch; else it
 * waits for the running one's slice to end.
 * Positive lag: as in test_lag_kept_across_sleep, p1 sleeps at S with lag
 * S/2 and is woken at 1.5 S; p0, past the mean, is preempted: p1 runs
 * from 1.5 S + the wake-up latency (16 us) + the switch (2 us).
 * Negative lag: p0 runs [0, S), p1 [S, 2S) (both at virtual time S), p0
 * wins the tie at 2S, runs to 2.5 S and sleeps, S/4 ahead (the mean 1.25
 * S less its 1.5 S): not eligible, it stays queued (test_delayed_dequeue).
 * p1 runs from 2.5 S. p0 is woken at 2.75 S, still S/8 ahead of the mean
 * (1.375 S), and requeued where it was, 1.5 S: p1, not past the mean,
 * keeps the CPU to its slice's end, 3.5 S, when p0 (1.5 S against p1's
 * 2 S) takes it. */
static void test_wakeup_preempts(void)
{
    const ts_ps sw = 2 * US, wake = 16 * US;
    struct ts_sched *s = make(2, NULL, sw, wake);
    CHECK_EQ(ts_sched_gate(s, 0, 0), 0);
    CHECK_EQ(ts_sched_gate(s, 1, SLICE), SLICE + sw);
    ts_sched_wait_begin(s, 1, SLICE + sw, 0, TS_SCHED_SLEEP);
    CHECK_EQ(ts_sched_gate(s, 0, SLICE + sw), SLICE + 2 * sw);
    ts_ps ready;
    ts_sched_wake(s, 1, SLICE + SLICE / 2, -1, &ready);
    CHECK_EQ(ready, SLICE + SLICE / 2 + wake);
    CHECK_EQ(ts_sched_gate(s, 1, ready), ready + sw);
    ts_sched_destroy(s);

    s = make(2, NULL, 0, 0);
    CHECK_EQ(ts_sched_gate(s, 0, 0), 0);
    CHECK_EQ(ts_sched_gate(s, 1, 0), SLICE);
    CHECK_EQ(ts_sched_gate(s, 1, SLICE), SLICE);
    CHECK_EQ(ts_sched_gate(s, 0, SLICE), 2 * SLICE);
    CHECK_EQ(ts_sched_gate(s, 0, 2 * SLICE), 2 * SLICE);
    ts_sched_wait_begin(s, 0, 2 * SLICE + SLICE / 2, 0, TS_SCHED_SLEEP);
    CHECK_EQ(ts_sched_gate(s, 1, 2 * SLICE + SLICE / 2), 2 * SLICE + SLICE / 2);
    ts_sched_wake(s, 0, 2 * SLICE + 3 * SLICE / 4, -1, &ready);
    CHECK_EQ(ts_sched_gate(s, 0, ready), 3 * SLICE + SLICE / 2);
    CHECK_EQ(ts_sched_vruntime(s, 0), SLICE + SLICE / 2);
    ts_sched_destroy(s);
}

/* Participants on the CPUs cpu[] (bound); no costs; a tick of 1 ps. */
static struct ts_sched *make_at(unsigned ncpus, const unsigned *cpu, unsigned nprocs,
                                ts_ps wake_latency)
{
    struct ts_sched_config c = config(ncpus, cpu, nprocs);
    c.wake_latency = c.wake_latency_busy = wake_latency;
    return create(&c);
}

/* A woken task is placed and weighed against the task running when it
 * arrives on its run queue (its wake-up latency past), not at the waker's
 * call. p0, p1 and p2 on CPU 0, the waker p3 on CPU 1; no switch cost, a
 * wake-up latency of 50 us. p0 (busy, never sleeps) runs [0, S). At S p1
 * (virtual time 0) takes the CPU and sleeps at once, with lag S/3 (the
 * mean of S, 0, 0). p2 runs from S; at S + 100 us p3 wakes p1. p2 sleeps
 * at S + 120 us, before p1 arrives: the CPU takes p0, the only one there.
 * At S + 150 us p1 arrives and is placed: p0 (S + 30 us) is the only
 * other runnable task, so at S + 30 us less S/3 inflated by 2/1: S/3 +
 * 30 us. (Placed at the call, at the mean of p0 and p2, (S + 100 us) / 2,
 * less S/3 inflated by 3/2, it would be at 50 us: the latency, in which
 * others ran, would be S/3 - 20 us of credit it never earned.) p0 is past
 * the mean of the two, and p1 runs at once. (Weighed at the waker's call,
 * against p2, eligible then, p1 would not preempt, would miss the choice
 * at S + 120 us and would wait for p0's slice to end, 2S + 120 us.) */
static void test_weighed_on_arrival(void)
{
    static const unsigned cpu[4] = {0, 0, 0, 1};
    struct ts_sched *s = make_at(2, cpu, 4, 50 * US);
    CHECK_EQ(ts_sched_gate(s, 0, 0), 0);
    CHECK_EQ(ts_sched_gate(s, 1, 0), SLICE);
    CHECK_EQ(ts_sched_gate(s, 1, SLICE), SLICE);
    ts_sched_wait_begin(s, 1, SLICE, 0, TS_SCHED_SLEEP);
    CHECK_EQ(ts_sched_gate(s, 2, SLICE), SLICE);
    CHECK_EQ(ts_sched_gate(s, 3, SLICE + 100 * US), SLICE + 100 * US);
    ts_ps ready;
    ts_sched_wake(s, 1, SLICE + 100 * US, 3, &ready);
    CHECK_EQ(ready, SLICE + 150 * US);
    ts_sched_wait_begin(s, 2, SLICE + 120 * US, 0, TS_SCHED_SLEEP);
    CHECK(ts_sched_asleep(s, 2, SLICE + 120 * US));
    CHECK_EQ(ts_sched_gate(s, 1, ready), SLICE + 150 * US);
    /* S/3 rounded down in ps, doubled */
    CHECK(llabs(ts_sched_vruntime(s, 1) - (SLICE / 3 + 30 * US)) <= 2);
    ts_sched_destroy(s);
}

/* A sleeper woken onto its waker's own CPU joins the run queue during the
 * waker's call (Linux's ttwu_queue_cond: no wake list, no interrupt), not
 * a wake-up latency later. Three participants on one CPU, no costs, a
 * latency of 50 us. p0 runs [0, S). At S p1 takes the CPU and sleeps at
 * once, with lag S/3 (the mean of S, 0, 0); p2 (virtual time 0, eligible,
 * deadline S against p0's 2S) runs from S and wakes p1 at S + 100 us: p1
 * is placed then, at the mean of p0 (S) and p2 (100 us) less S/3
 * inflated by 3/2, 50 us. p2, eligible and inside its slice, keeps the
 * CPU; it sleeps at S + 120 us, and p1 (eligible, deadline S + 50 us)
 * runs then, not p0 (past the mean). (With the latency, p1 would arrive
 * at S + 150 us, after p0 had taken the CPU at S + 120 us, and run from
 * S + 150 us.) */
static void test_local_wake_queued_at_once(void)
{
    struct ts_sched *s = make(3, NULL, 0, 50 * US);
    CHECK_EQ(ts_sched_gate(s, 0, 0), 0);
    CHECK_EQ(ts_sched_gate(s, 1, 0), SLICE);
    CHECK_EQ(ts_sched_gate(s, 1, SLICE), SLICE);
    ts_sched_wait_begin(s, 1, SLICE, 0, TS_SCHED_SLEEP);
    CHECK_EQ(ts_sched_gate(s, 2, SLICE), SLICE);
    ts_ps ready;
    ts_sched_wake(s, 1, SLICE + 100 * US, 2, &ready);
    CHECK_EQ(ready, SLICE + 100 * US);
    CHECK_EQ(ts_sched_gate(s, 2, SLICE + 100 * US), SLICE + 100 * US);
    ts_sched_wait_begin(s, 2, SLICE + 120 * US, 0, TS_SCHED_SLEEP);
    CHECK(ts_sched_asleep(s, 2, SLICE + 120 * US));
    CHECK_EQ(ts_sched_gate(s, 1, ready), SLICE + 120 * US);
    /* S/3 rounded down in ps, inflated by 3/2 */
    CHECK(llabs(ts_sched_vruntime(s, 1) - 50 * US) <= 2);
    ts_sched_destroy(s);
}

/* A woken task is on no run queue until it arrives: it does not count in
 * the mean its CPU's others are weighed by meanwhile. Three participants
 * on one CPU, no costs, a wake-up latency of 50 us. p0 runs [0, S); p1
 * takes the CPU at S and sleeps at once (lag S/3); p2 runs from S. p1 is
 * woken at S + 100 us (arriving at S + 150 us); p2 sleeps at S + 120 us,
 * its lag the mean of p0 and itself only, (S + 120 us) / 2, less its
 * 120 us: S/2 - 60 us. p1 arrives, placed at p0's S + 30 us less 2S/3,
 * S/3 + 30 us, and runs. p2, woken at S + 200 us, arrives at S + 250 us
 * and is placed at the mean of p0 (S + 30 us) and p1 (S/3 + 130 us) less
 * its lag inflated by 3/2: 86.67 us. (With p1 counted at its old virtual
 * time 0 while on its way, p2's lag would be S/3 - 80 us, and p2 placed
 * at 366.67 us.) */
static void test_on_its_way_not_in_the_mean(void)
{
    struct ts_sched *s = make(3, NULL, 0, 50 * US);
    CHECK_EQ(ts_sched_gate(s, 0, 0), 0);
    CHECK_EQ(ts_sched_gate(s, 1, SLICE), SLICE);
    ts_sched_wait_begin(s, 1, SLICE, 0, TS_SCHED_SLEEP);
    CHECK_EQ(ts_sched_gate(s, 2, SLICE), SLICE);
    ts_ps ready;
    ts_sched_wake(s, 1, SLICE + 100 * US, -1, &ready);
    CHECK_EQ(ready, SLICE + 150 * US);
    ts_sched_wait_begin(s, 2, SLICE + 120 * US, 0, TS_SCHED_SLEEP);
    CHECK_EQ(ts_sched_gate(s, 1, ready), SLICE + 150 * US);
    ts_sched_wake(s, 2, SLICE + 200 * US, -1, &ready);
    CHECK_EQ(ts_sched_gate(s, 1, ready), ready);
    /* 746666667 - 660000000 ps: S/3 rounded down in ps */
    CHECK(llabs(ts_sched_vruntime(s, 2) - 86666667) <= 2);
    ts_sched_destroy(s);
}

/* EEVDF's choice and its slice, in virtual time. p0 (a sleeper) and the
 * busy p1 and p2 on CPU 0, a waker p3 on CPU 1; no costs. p0 sleeps at
 * once, with lag 0. p1 runs [0, S), p2 [S, 2S) (each reaching its
 * deadline S, renewed to 2S); at 2S both are at S with deadline 2S, and
 * p1, not running, takes the CPU. At 2.2 S p3 wakes p0: placed at the mean
 * of p1 (1.2 S) and p2 (S), 1.1 S, deadline 2.1 S. p1 is past the new
 * mean, 1.1 S; eligible are p2 (deadline 2S) and p0 (2.1 S): p2 runs,
 * its slice whole, to 3.2 S (virtual 2S, deadline renewed to 3S). Then
 * eligible (mean 1.43 S) are p0 and p1, and p1's deadline, 2S, is the
 * earlier: p1 runs again, with what is left of its slice, 0.8 S, not a
 * new one, to 4S, and p0 runs from 4S. (Choosing the least virtual time,
 * p0 would run from 3.2 S; with a new slice at each choice, from 4.2 S.) */
static void test_deadline_and_what_is_left_of_a_slice(void)
{
    static const unsigned cpu[4] = {0, 0, 0, 1};
    struct ts_sched *s = make_at(2, cpu, 4, 0);
    CHECK_EQ(ts_sched_gate(s, 0, 0), 0);
    ts_sched_wait_begin(s, 0, 0, 0, TS_SCHED_SLEEP);
    CHECK(ts_sched_asleep(s, 0, 0));
    CHECK_EQ(ts_sched_gate(s, 1, 0), 0);
    CHECK_EQ(ts_sched_gate(s, 2, 0), SLICE);
    CHECK_EQ(ts_sched_gate(s, 1, SLICE), 2 * SLICE);
    CHECK_EQ(ts_sched_gate(s, 3, 0), 0);
    ts_ps ready;
    ts_sched_wake(s, 0, 2 * SLICE + SLICE / 5, 3, &ready);
    CHECK_EQ(ready, 2 * SLICE + SLICE / 5);
    CHECK_EQ(ts_sched_gate(s, 2, ready), ready);
    CHECK_EQ(ts_sched_vruntime(s, 0), SLICE + SLICE / 10);
    CHECK_EQ(ts_sched_gate(s, 1, ready), 3 * SLICE + SLICE / 5);
    CHECK_EQ(ts_sched_gate(s, 0, 3 * SLICE + SLICE / 5), 4 * SLICE);
    ts_sched_destroy(s);
}

/* DELAY_DEQUEUE and DELAY_ZERO (Linux 6.12 on). p0 and p1 on one CPU, no
 * costs. p0 runs [0, S/2) and sleeps there, at virtual time S/2 past the
 * mean S/4: not eligible, so it stays queued at S/2 (deadline S). p1 runs
 * from S/2, its slice to 1.5 S. Woken at 0.75 S, p0's lag is the mean of
 * S/2 and p1's S/4 less S/2, -S/8: still owing, it is requeued where it
 * is, S/2. Woken at 1.25 S instead, the mean (S/2 and 0.75 S) has passed
 * it: lag S/8 > 0, placed anew with none, at 0.75 S (deadline 1.75 S).
 * Either way p1 keeps its slice and p0 runs from 1.5 S. (Kept at the lag
 * it slept with, -S/4, p0 would come back at 0.75 S and at 1.25 S: p1's
 * virtual time plus twice S/4; from the second, it would wait behind all
 * of p1's next slice, to 2.5 S. Requeued without the new placement it
 * would stay at S/2; placed anew at the first, at p1's S/4.) */
static void test_delayed_dequeue(void)
{
    static const ts_ps woken[2] = {SLICE / 4 * 3, SLICE / 4 * 5};
    static const ts_ps vruntime[2] = {SLICE / 2, SLICE / 4 * 3};
    for (int i = 0; i < 2; i++) {
        struct ts_sched *s = make(2, NULL, 0, 0);
        CHECK_EQ(ts_sched_gate(s, 0, 0), 0);
        CHECK_EQ(ts_sched_gate(s, 1, 0), SLICE);
        ts_sched_wait_begin(s, 0, SLICE / 2, 0, TS_SCHED_SLEEP);
        CHECK(ts_sched_asleep(s, 0, SLICE / 2));
        CHECK_EQ(ts_sched_gate(s, 1, SLICE / 2), SLICE / 2);
        ts_ps ready = -1;
        ts_sched_wake(s, 0, woken[i], -1, &ready);
        CHECK_EQ(ready, woken[i]);
        CHECK_EQ(ts_sched_gate(s, 0, ready), SLICE + SLICE / 2);
        CHECK_EQ(ts_sched_vruntime(s, 0), vruntime[i]);
        ts_sched_destroy(s);
    }
}

/* A delayed sleeper still counts in its CPU's mean. p0, p1, p2 on one
 * CPU, no costs. p0 runs first and sleeps at once, level with the others
 * (lag 0). p1 runs [0, S/2) and sleeps at S/2, past the mean S/4 (of its
 * S/2 and p2's 0): delayed. p2 runs from S/2. Woken at 0.75 S, p0 is
 * placed at the mean of the queued others, p1's S/2 and p2's S/4: 3S/8,
 * and p2, not past the new mean, keeps the CPU to the end of its slice,
 * 1.5 S (virtual S); then the CPU takes p1 (eligible, deadline S), which
 * leaves, and then p0 (deadline 1.375 S), which runs. (With p1 out of the mean, p0 would
 * be placed at p2's S/4.) */
static void test_delayed_counts_in_the_mean(void)
{
    struct ts_sched *s = make(3, NULL, 0, 0);
    CHECK_EQ(ts_sched_gate(s, 0, 0), 0);
    ts_sched_wait_begin(s, 0, 0, 0, TS_SCHED_SLEEP);
    CHECK_EQ(ts_sched_gate(s, 1, 0), 0);
    ts_sched_wait_begin(s, 1, SLICE / 2, 0, TS_SCHED_SLEEP);
    CHECK_EQ(ts_sched_gate(s, 2, SLICE / 2), SLICE / 2);
    ts_ps ready = -1;
    ts_sched_wake(s, 0, SLICE / 4 * 3, -1, &ready);
    CHECK_EQ(ts_sched_gate(s, 0, ready), SLICE + SLICE / 2);
    CHECK_EQ(ts_sched_vruntime(s, 0), SLICE / 8 * 3);
    CHECK(ts_sched_asleep(s, 1, SLICE + SLICE / 2));
    ts_sched_destroy(s);
}

/* A delayed sleeper chosen leaves its queue with no lag (DELAY_ZERO), and
 * only then is it a sleeper that a wake-up may move. Unbound: p0 and p1
 * on CPU 0, the waker p2 on CPU 1, CPU 2 idle; no costs. p0 sleeps
 * delayed at S/2 (as above); p2 wakes it at 0.75 S: it is still queued
 * on CPU 0 and stays there, though CPU 2 is idle. Not woken, p0 is chosen
 * at 1.5 S, when p1's slice ends (p0 eligible, deadline S): it leaves
 * with its lag, S/4, cut to 0, and p1 goes on with a new slice, to 2.5 S.
 * Woken by p2 at 2 S it goes to idle CPU 2, where it runs at once, placed
 * with no lag. (Kept at S/4 and woken on CPU 0, it would have preempted
 * p1 at 2 S.) Bound, woken at 2 S, it stays on CPU 0 and runs at 2.5 S. */
static void test_delayed_sleeper_stays_queued(void)
{
    static const unsigned cpu[3] = {0, 0, 1};
    for (int i = 0; i < 3; i++) {
        struct ts_sched_config c = config(3, cpu, 3);
        c.unbound = i < 2;
        struct ts_sched *s = create(&c);
        CHECK_EQ(ts_sched_gate(s, 0, 0), 0);
        CHECK_EQ(ts_sched_gate(s, 2, 0), 0);
        ts_sched_wait_begin(s, 0, SLICE / 2, 0, TS_SCHED_SLEEP);
        CHECK_EQ(ts_sched_gate(s, 1, SLICE / 2), SLICE / 2);
        ts_ps at = i == 0 ? SLICE / 4 * 3 : 2 * SLICE, ready = -1;
        CHECK_EQ(ts_sched_gate(s, 2, at), at);
        ts_sched_wake(s, 0, at, 2, &ready);
        CHECK_EQ(ts_sched_cpu(s, 0), i == 1 ? 2u : 0u);
        CHECK_EQ(ts_sched_gate(s, 0, ready), i == 0   ? SLICE + SLICE / 2
                                             : i == 1 ? at
                                                      : 2 * SLICE + SLICE / 2);
        ts_sched_destroy(s);
    }
}

/* A futex broadcast wakes N sleepers onto N idle CPUs in one step: four
 * unbound participants of CPU 0 of 4 fall asleep there in turn; one
 * broadcast at 10 us wakes them all. The first stays on its own CPU, idle;
 * each next one finds that CPU taken by a wake-up pending there and goes
 * to the next idle CPU: all four run at 10 us + the wake-up latency. */
static struct ts_sched *broadcast_four(ts_ps wake, ts_ps ready[4])
{
    struct ts_sched *s = make_on(4, true, 4, NULL, 0, wake, 1);
    for (unsigned p = 0; p < 4; p++) {
        CHECK_EQ(ts_sched_gate(s, p, 0), 0);
        ts_sched_wait_begin(s, p, 0, 0, TS_SCHED_SLEEP);
    }
    for (unsigned p = 0; p < 4; p++)
        ts_sched_wake(s, p, 10 * US, -1, &ready[p]);
    return s;
}

static void test_broadcast_to_idle_cpus(void)
{
    const ts_ps wake = 16 * US;
    ts_ps ready[4];
    struct ts_sched *s = broadcast_four(wake, ready);
    unsigned used = 0;
    for (unsigned p = 0; p < 4; p++) {
        CHECK_EQ(ready[p], 10 * US + wake);
        CHECK_EQ(ts_sched_gate(s, p, ready[p]), ready[p]);
        used |= 1u << ts_sched_cpu(s, p);
    }
    CHECK_EQ(used, 0xf);
    ts_sched_destroy(s);
}

/* Where an unbound wakee goes (wake_affine): two CPUs, each with one
 * busy neighbour, p0 on CPU 0 and p1 on CPU 1. Both fall asleep at once
 * (at their CPU's first choice, the first tick, 4 ms) and sleep until
 * `late`; p1 is woken then
 * (by no participant: it stays on its CPU) and, once running, wakes p0.
 * No CPU is idle, so wake_affine_weight decides: CPU 1's load with p0's
 * (1 + l1 + l0) against CPU 0's without it (1), biased by 1.08. After
 * 200 ms asleep (6 half-lives of PELT) both loads are about 0.015:
 * 1.03 < 1.08, and p0 moves to CPU 1. After 2 ms asleep they are near
 * 1: p0 stays on CPU 0. */
static unsigned affine_wakee_cpu(ts_ps late)
{
    static const unsigned one_busy_each[2] = {1, 1};
    static const unsigned split[2] = {0, 1};
    struct ts_sched_config c = config(2, split, 2);
    c.noise = one_busy_each;
    c.unbound = true;
    c.wake_latency = c.wake_latency_busy = 16 * US;
    c.tick = 4000 * US;
    struct ts_sched *s = create(&c);
    ts_sched_wait_begin(s, 0, 0, 0, TS_SCHED_SLEEP);
    ts_sched_wait_begin(s, 1, 0, 0, TS_SCHED_SLEEP);
    CHECK(ts_sched_asleep(s, 0, late) && ts_sched_asleep(s, 1, late));
    ts_ps ready;
    ts_sched_wake(s, 1, late, -1, &ready);
    CHECK_EQ(ts_sched_cpu(s, 1), 1);
    ts_ps runs = ts_sched_gate(s, 1, ready);
    CHECK_EQ(ts_sched_gate(s, 1, runs), runs);
    ts_sched_wake(s, 0, runs, 1, &ready);
    unsigned cpu = ts_sched_cpu(s, 0);
    ts_sched_destroy(s);
    return cpu;
}

static void test_wake_affine(void)
{
    CHECK_EQ(affine_wakee_cpu(200000 * US), 1);
    CHECK_EQ(affine_wakee_cpu(6000 * US), 0);
}

/* The timer tick (4 ms, a slice 1 ms): a slice ends at the first tick
 * after it is spent, and a wake-up after it is spent has the CPU choose
 * again even while the running task is eligible.
 * Two participants on one CPU: p0 runs [0, 4 ms), p1 then [4, 8 ms); at
 * 8 ms p0 takes the CPU and sleeps at once, level with p1 (both 4 ms of
 * CPU time: lag 0). p1 runs from 8 ms, its slice spent at 9 ms. Woken at
 * 8.5 ms, p0 is placed level with p1 (no lag); p1 is not past the mean
 * and its slice not spent: it keeps the CPU to the tick, 12 ms. Woken at
 * 10 ms instead, past p1's slice, the CPU chooses at once: both at 6 ms
 * of virtual time, the one not running, p0. */
static unsigned tick_woken_runs_at(ts_ps woken)
{
    struct ts_sched *s = make_on(1, false, 2, NULL, 0, 0, 4000 * US);
    CHECK_EQ(ts_sched_gate(s, 0, 0), 0);
    CHECK_EQ(ts_sched_gate(s, 1, 0), 4000 * US);
    CHECK_EQ(ts_sched_gate(s, 1, 4000 * US), 4000 * US);
    CHECK_EQ(ts_sched_gate(s, 0, 4000 * US), 8000 * US);
    CHECK_EQ(ts_sched_gate(s, 0, 8000 * US), 8000 * US);
    ts_sched_wait_begin(s, 0, 8000 * US, 0, TS_SCHED_SLEEP);
    CHECK_EQ(ts_sched_gate(s, 1, 8000 * US), 8000 * US);
    ts_ps ready;
    ts_sched_wake(s, 0, woken, -1, &ready);
    ts_ps runs = ts_sched_gate(s, 0, ready);
    ts_sched_destroy(s);
    return (unsigned)(runs / US);
}

static void test_tick(void)
{
    CHECK_EQ(tick_woken_runs_at(8500 * US), 12000);
    CHECK_EQ(tick_woken_runs_at(10000 * US), 10000);
}

/* One participant beside one busy neighbour on one CPU. It wants the CPU
 * all the time but sleeps briefly and often: it runs a quarter slice of
 * CPU time, sleeps, and a timer wakes it 10 us later. The CPU is shared
 * fairly: half each, whatever the sleeps. Each sleep keeps the lag it
 * leaves with, so it cannot run ahead of its share by sleeping (it is
 * placed behind, ineligible, and waits). Measured over 400 slices, in
 * steps of 1 us. */
static void test_brief_sleeper_gets_its_share(void)
{
    static const unsigned one_busy[1] = {1};
    const ts_ps sw = 2 * US, wake = 16 * US;
    struct ts_sched *s = make(1, one_busy, sw, wake);
    const ts_ps end = 400 * SLICE, burst = SLICE / 4, step = US;
    ts_ps t = 0, ran = 0;
    unsigned sleeps = 0;
    while (t < end) {
        ts_ps ran_burst = 0;
        while (ran_burst < burst && t < end) {
            ts_ps at = ts_sched_gate(s, 0, t);
            if (at > t) {
                t = at;
                continue;
            }
            t += step;
            ran_burst += step;
        }
        ran += ran_burst;
        ts_sched_wait_begin(s, 0, t, 0, TS_SCHED_SLEEP);
        sleeps++;
        ts_ps ready;
        ts_sched_wake(s, 0, t + 10 * US, -1, &ready);
        t = ready;
    }
    double share = (double)ran / (double)end;
    fprintf(stderr, "brief sleeper beside a busy task: %.3f of the CPU, %u sleeps\n", share,
            sleeps);
    CHECK(sleeps > 700); /* 200 ms of CPU time in bursts of 250 us */
    CHECK(share > 0.45 && share < 0.52);
    ts_sched_destroy(s);
}

/* The periodic balancer, on 2 CPUs with Linux's 4 ms tick: a busy CPU's
 * turn every 2 ms x busy_factor 16, in jiffies less one: 7 ticks, 28 ms
 * (60 ms once a turn found balance: the interval doubles to 4 ms); an
 * idle CPU's every 2 ms, one tick. One participant, bound to CPU 0 and
 * done at 0: it counts in CPU 0's load only as its blocked load, 1.0 (a
 * new task's) halving every 32 ms. */
static struct ts_sched *make_balanced(const unsigned noise[2])
{
    static const unsigned on_cpu0[1] = {0};
    struct ts_sched_config c = config(2, on_cpu0, 1);
    c.noise = noise;
    c.tick = 4000 * US;
    c.balance = true;
    struct ts_sched *s = create(&c);
    ts_sched_done(s, 0, 0);
    return s;
}

/* Bring the scheduler to t (every balancer turn up to t is taken). */
static void run_to(struct ts_sched *s, ts_ps t)
{
    ts_sched_settle(s, t);
    CHECK(!ts_sched_asleep(s, 0, t));
}

/* Two busy neighbours on CPU 0, none on CPU 1, which idles. CPU 1's
 * turns, at 4, 8, 12 ms, even out the tasks (sibling_imbalance: one to
 * move). CPU 0 changes task at every tick, so at 4 and 8 ms its queued
 * neighbour left it that instant: cache hot, it stays while the failed
 * turns are at most cache_nice_tries (1). At 12 ms two turns have failed,
 * and it moves. (Without the heat rule it moves at 4 ms; without the
 * idle CPU's pull, never.) */
static void test_idle_cpu_pulls(void)
{
    const unsigned noise[2] = {2, 0};
    struct ts_sched *s = make_balanced(noise);
    run_to(s, 4000 * US);
    CHECK_EQ(ts_sched_noise_on(s, 1), 0);
    run_to(s, 12000 * US - 1);
    CHECK_EQ(ts_sched_noise_on(s, 1), 0);
    run_to(s, 12000 * US);
    CHECK_EQ(ts_sched_noise_on(s, 1), 1);
    CHECK_EQ(ts_sched_noise_on(s, 0), 1);
    ts_sched_destroy(s);
}

/* Three busy neighbours (and the sleeper) on CPU 0, two on CPU 1; both
 * CPUs take their turn at 28 ms, CPU 0 first. CPU 0 is the heavier (3 +
 * 2^(-28/32) = 3.545): balanced. CPU 1 (2.0): the busiest carries more
 * than 117% of it, the mean is 2.773, and half the difference, 0.773, is
 * less than a neighbour's load, 1.0: nothing moves, a failed turn. At 56
 * ms (the least interval again): CPU 0 carries 3 + 2^(-56/32) = 3.297,
 * the imbalance is 0.649, and after one failed turn a load counts halved
 * (shr_bound): 0.5 fits, and a neighbour moves. (Without the halving
 * nothing moves then.) */
static void test_busiest_gives_by_load(void)
{
    const unsigned noise[2] = {3, 2};
    struct ts_sched *s = make_balanced(noise);
    run_to(s, 56000 * US - 1);
    CHECK_EQ(ts_sched_noise_on(s, 1), 2);
    run_to(s, 56000 * US);
    CHECK_EQ(ts_sched_noise_on(s, 1), 3);
    CHECK_EQ(ts_sched_noise_on(s, 0), 2);
    ts_sched_destroy(s);
}

/* Six busy neighbours (and the sleeper's fading load) on CPU 0, seven on
 * CPU 1: 7 is at most 117% of 6 (7.02), so neither CPU pulls: none moves
 * in a second. (Without the check the lighter pulls once a failed turn
 * has halved a neighbour's load to the imbalance, 0.5, and they move to
 * and fro.) */
static void test_within_imbalance_pct(void)
{
    const unsigned noise[2] = {6, 7};
    struct ts_sched *s = make_balanced(noise);
    run_to(s, 1000000 * US);
    struct ts_sched_stats st;
    ts_sched_stats(s, &st);
    CHECK_EQ(st.noise_moves, 0);
    CHECK_EQ(st.active_balances, 0);
    CHECK_EQ(ts_sched_noise_on(s, 0), 6);
    ts_sched_destroy(s);
}

/* Two participants of one CPU, created 10 us apart from 1 ps on (4 ms
 * ticks, slices of 1 ms, nothing else there). p0 exists from 1 ps and
 * runs at once on the idle CPU; p1 does not exist before 10 us + 1 ps,
 * so the CPU is p0's alone until then (p1 runs nowhere earlier, asked at
 * 0). Created, p1 joins with no lag at the mean, p0's virtual time: p0 is
 * not past the mean and its slice protected, so p1 waits for the first
 * tick after p0's slice, at 4 ms, where it has the least virtual time. */
static void test_created_in_turn(void)
{
    static const unsigned on_cpu0[2] = {0, 0};
    struct ts_sched_config c = config(1, on_cpu0, 2);
    c.tick = 4000 * US;
    c.create_first = 1;
    c.create_every = 10 * US;
    struct ts_sched *s = create(&c);
    CHECK_EQ(ts_sched_created(s, 0), 1);
    CHECK_EQ(ts_sched_created(s, 1), 1 + 10 * US);
    CHECK_EQ(ts_sched_gate(s, 0, 1), 1);
    CHECK_EQ(ts_sched_gate(s, 0, 5 * US), 5 * US);
    CHECK_EQ(ts_sched_gate(s, 1, 0), 4000 * US);
    CHECK_EQ(ts_sched_vruntime(s, 1), 10 * US);
    CHECK_EQ(ts_sched_gate(s, 1, 4000 * US), 4000 * US);
    ts_sched_destroy(s);
}

/* The crowd's time (stats.crowd_time), as scripts/sched_placement.sh
 * measures a traced run: the broadcast of test_broadcast_to_idle_cpus
 * spreads four participants of CPU 0 over four CPUs at 10 us, and p0
 * returns at 30 us: 10 us with all four on one CPU, 20 us each on its
 * own; what happens after the first return is not counted (p1's at 40
 * us). Created one after another (1 ps, 10 us + 1 ps on one CPU, as in
 * test_created_in_turn) the count starts at the last creation: 2 on one
 * from 10 us + 1 ps to p0's return at 1 ms. (Counted from 0, crowd_time[2]
 * is 1 ms; counted to the last return, the broadcast's [1] is 30 us.) */
static void test_crowd_time(void)
{
    ts_ps ready[4];
    struct ts_sched *s = broadcast_four(16 * US, ready);
    for (unsigned p = 0; p < 4; p++)
        CHECK_EQ(ts_sched_gate(s, p, ready[p]), ready[p]);
    ts_sched_done(s, 0, 30 * US);
    ts_sched_done(s, 1, 40 * US);
    struct ts_sched_stats st;
    ts_sched_stats(s, &st);
    CHECK_EQ(st.crowd_time[4], 10 * US);
    CHECK_EQ(st.crowd_time[3] + st.crowd_time[2], 0);
    CHECK_EQ(st.crowd_time[1], 20 * US);
    ts_sched_destroy(s);

    static const unsigned on_cpu0[2] = {0, 0};
    struct ts_sched_config c = config(1, on_cpu0, 2);
    c.tick = 4000 * US;
    c.create_first = 1;
    c.create_every = 10 * US;
    s = create(&c);
    CHECK_EQ(ts_sched_gate(s, 0, 1), 1);
    CHECK_EQ(ts_sched_gate(s, 1, 0), 4000 * US);
    ts_sched_done(s, 0, 1000 * US);
    ts_sched_stats(s, &st);
    CHECK_EQ(st.crowd_time[2], 1000 * US - (10 * US + 1));
    CHECK_EQ(st.crowd_time[1], 0);
    ts_sched_destroy(s);
}

/* CFS (Linux before 6.6; sim_sched.c, "CFS"), the config's slice S as its
 * minimum granularity: a latency of 8 S, a wake-up granularity of 4/3 S. */
static struct ts_sched *make_cfs(unsigned nprocs, ts_ps switch_cost)
{
    static const unsigned on_cpu0[2] = {0, 0};
    struct ts_sched_config c = config(1, on_cpu0, nprocs);
    c.switch_cost = switch_cost;
    c.cfs = true;
    return create(&c);
}

/* Two participants on one CPU under CFS take turns by their share of the
 * latency, 8 S / 2 = 4 S (EEVDF: by the slice, test_alternate_by_slice):
 * p0 runs [0, 4 S); p1, of less virtual time then, from 4 S + switch. */
static void test_cfs_share_of_latency(void)
{
    const ts_ps sw = 2 * US;
    struct ts_sched *s = make_cfs(2, sw);
    CHECK_EQ(ts_sched_gate(s, 0, 0), 0);
    CHECK_EQ(ts_sched_gate(s, 1, 0), 4 * SLICE);
    CHECK_EQ(ts_sched_gate(s, 1, 4 * SLICE), 4 * SLICE + sw);
    CHECK_EQ(ts_sched_gate(s, 0, 4 * SLICE), 8 * SLICE + sw);
    ts_sched_destroy(s);
}

/* p1 runs [4 S, 7 S) under CFS, to virtual time 3 S, and sleeps; p0 (at 4
 * S) then runs alone, its share the whole latency. Woken at 7.25 S, p1
 * keeps its 3 S (it is not more than half a latency behind p0's 4.25 S):
 * 1.25 S behind, within the wake-up granularity (4/3 S), so it does not
 * preempt (EEVDF would: p0 is past the mean). p0's share, two runnable
 * again, is 4 S from its pick at 7 S: p1 runs from 11 S. Woken at 7.5 S
 * instead, 1.5 S behind, it preempts at once. */
static struct ts_sched *cfs_sleeper_at_7(void)
{
    struct ts_sched *s = make_cfs(2, 0);
    CHECK_EQ(ts_sched_gate(s, 0, 0), 0);
    CHECK_EQ(ts_sched_gate(s, 1, 4 * SLICE), 4 * SLICE);
    CHECK_EQ(ts_sched_gate(s, 1, 7 * SLICE), 7 * SLICE);
    ts_sched_wait_begin(s, 1, 7 * SLICE, 0, TS_SCHED_SLEEP);
    CHECK(ts_sched_asleep(s, 1, 7 * SLICE));
    CHECK_EQ(ts_sched_gate(s, 0, 7 * SLICE), 7 * SLICE);
    return s;
}

static void test_cfs_wakeup_granularity(void)
{
    ts_ps ready = -1;
    struct ts_sched *s = cfs_sleeper_at_7();
    ts_sched_wake(s, 1, 7 * SLICE + SLICE / 4, -1, &ready);
    CHECK_EQ(ts_sched_gate(s, 1, 7 * SLICE + SLICE / 4), 11 * SLICE);
    CHECK_EQ(ts_sched_vruntime(s, 1), 3 * SLICE);
    ts_sched_destroy(s);
    s = cfs_sleeper_at_7();
    ts_sched_wake(s, 1, 7 * SLICE + SLICE / 2, -1, &ready);
    CHECK_EQ(ts_sched_gate(s, 1, 7 * SLICE + SLICE / 2), 7 * SLICE + SLICE / 2);
    ts_sched_destroy(s);
}

/* A long sleeper comes back at most half a latency (4 S) behind the CPU's
 * min_vruntime (GENTLE_FAIR_SLEEPERS): p1 sleeps at 4 S with virtual time
 * 0 the moment it is given the CPU; p0 runs alone to 20 S, virtual time
 * 20 S; p1, woken then, is placed at 16 S, not 0 (which would give it the
 * CPU for 20 S), and preempts (4 S behind). */
static void test_cfs_sleeper_credit(void)
{
    struct ts_sched *s = make_cfs(2, 0);
    CHECK_EQ(ts_sched_gate(s, 0, 0), 0);
    CHECK_EQ(ts_sched_gate(s, 1, 4 * SLICE), 4 * SLICE);
    ts_sched_wait_begin(s, 1, 4 * SLICE, 0, TS_SCHED_SLEEP);
    CHECK_EQ(ts_sched_gate(s, 0, 4 * SLICE), 4 * SLICE);
    ts_ps ready = -1;
    ts_sched_wake(s, 1, 20 * SLICE, -1, &ready);
    CHECK_EQ(ts_sched_gate(s, 1, 20 * SLICE), 20 * SLICE);
    CHECK_EQ(ts_sched_vruntime(s, 1), 16 * SLICE);
    ts_sched_destroy(s);
}

/* A new task under CFS starts a share ahead of the CPU's min_vruntime
 * (START_DEBIT): p0, created at 1 ps on an empty CPU, at its share alone,
 * the whole latency, 8 S, and runs; p1, created at S + 1, at p0's virtual
 * time then, 9 S, plus its share among two, 4 S: 13 S. */
static void test_cfs_new_task_debit(void)
{
    static const unsigned on_cpu0[2] = {0, 0};
    struct ts_sched_config c = config(1, on_cpu0, 2);
    c.cfs = true;
    c.create_first = 1;
    c.create_every = SLICE;
    struct ts_sched *s = create(&c);
    CHECK_EQ(ts_sched_gate(s, 0, 1), 1);
    CHECK_EQ(ts_sched_gate(s, 1, SLICE + 1), 4 * SLICE + 1);
    CHECK_EQ(ts_sched_vruntime(s, 0), 9 * SLICE);
    CHECK_EQ(ts_sched_vruntime(s, 1), 13 * SLICE);
    ts_sched_destroy(s);
}

int main(void)
{
    test_alternate_by_slice();
    test_lag_kept_across_sleep();
    test_spin_keeps_its_end();
    test_sleep_is_charged();
    test_wakeup_preempts();
    test_weighed_on_arrival();
    test_local_wake_queued_at_once();
    test_on_its_way_not_in_the_mean();
    test_deadline_and_what_is_left_of_a_slice();
    test_delayed_dequeue();
    test_delayed_counts_in_the_mean();
    test_delayed_sleeper_stays_queued();
    test_broadcast_to_idle_cpus();
    test_wake_affine();
    test_tick();
    test_brief_sleeper_gets_its_share();
    test_idle_cpu_pulls();
    test_busiest_gives_by_load();
    test_within_imbalance_pct();
    test_created_in_turn();
    test_crowd_time();
    test_cfs_share_of_latency();
    test_cfs_wakeup_granularity();
    test_cfs_sleeper_credit();
    test_cfs_new_task_debit();
    printf("%d passed, %d failed\n", check_passed, check_failed);
    return check_failed != 0;
}
