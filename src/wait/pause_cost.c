/*
 * The cost of one pause (ts_cpu_relax) on this machine, measured once per
 * process, and a time converted to pauses: the spin is bounded in time
 * (docs/design.md section 2, "The spin"). Its own file: GenMC (tests/genmc)
 * cannot run a timed loop of pauses, and its shim stands in for it.
 */
#include <pthread.h>
#include "base/clock.h"
#include "wait/wait.h"

#define TS_PAUSE_FLOOR 16u /* the spin's floor (wait.c, TS_ADAPTIVE_SPIN_FLOOR) */

/* The cost of one pause, measured once: the least of 5 timed runs of 2048
 * (a preempted run only lengthens its own figure, and a longer figure only
 * shortens the spin). */
static double pause_ns = 0;
static pthread_once_t pause_once = PTHREAD_ONCE_INIT;
/* This thread's fixed cost (ts_wait_pause_ns_fix); 0: the measured one */
static TS_TLS_INITIAL_EXEC _Thread_local double pause_ns_fixed = 0;

static void measure_pause(void)
{
    double best = 0;
    for (int run = 0; run < 5; run++) {
        uint64_t t0 = ts_monotonic_ns();
        for (int i = 0; i < 2048; i++)
            ts_cpu_relax();
        double per = (double)(ts_monotonic_ns() - t0) / 2048.0;
        if (per > 0 && (best == 0 || per < best))
            best = per;
    }
    pause_ns = best > 0.1 ? best : 0.1;
}

double ts_wait_pause_ns(void)
{
    if (pause_ns_fixed > 0)
        return pause_ns_fixed;
    pthread_once(&pause_once, measure_pause);
    return pause_ns;
}

double ts_wait_pause_ns_fix(double ns)
{
    double before = pause_ns_fixed;
    pause_ns_fixed = ns > 0 ? ns : 0;
    return before;
}

uint32_t ts_wait_pauses_for_ns(uint64_t ns)
{
    double n = (double)ns / ts_wait_pause_ns();
    if (n < (double)TS_PAUSE_FLOOR)
        return TS_PAUSE_FLOOR;
    return n > (double)(1u << 20) ? 1u << 20 : (uint32_t)n;
}
