/*
 * Private: the monotonic clock in nanoseconds, the one the waits' deadlines,
 * the pause calibration, the MPI set-up's timeout and the benchmarks read. docs/design.md
 * section "Layers" (base).
 */
#ifndef TOPSYNC_SRC_BASE_CLOCK_H
#define TOPSYNC_SRC_BASE_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t ts_monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif
