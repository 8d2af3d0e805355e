/*
 * libtopsync-pthread: POSIX barriers on topsync's barriers.
 *
 * Unmodified programs get it by LD_PRELOAD=libtopsync-pthread.so (or by
 * linking -ltopsync-pthread before libc): the library defines
 * pthread_barrier_init, pthread_barrier_wait and pthread_barrier_destroy
 * with POSIX semantics (one PTHREAD_BARRIER_SERIAL_THREAD per episode, any
 * threads in any number of barriers, count 0 is EINVAL). The algorithm and
 * wait policy come from TOPSYNC_BARRIER, TOPSYNC_WAIT, TOPSYNC_SPIN and
 * TOPSYNC_TIMEOUT as for topsync_barrier_create (auto by default). A bad
 * value prints one message and leaves every barrier to glibc's own
 * implementation; PTHREAD_PROCESS_SHARED barriers always go to glibc's.
 *
 * Memory ordering (POSIX): everything a thread did before its
 * pthread_barrier_wait happens before everything any thread does after
 * its wait of the same episode returns.
 *
 * The same functions under topsync names, for programs (and sanitizer
 * builds) that call them directly without interposition. These are only in
 * libtopsync-pthread, not in libtopsync.
 */
#ifndef TOPSYNC_PTHREAD_H
#define TOPSYNC_PTHREAD_H

#include <pthread.h>

#ifdef __cplusplus
extern "C" {
#endif

int topsync_pthread_barrier_init(pthread_barrier_t *barrier, const pthread_barrierattr_t *attr,
                                 unsigned count);
int topsync_pthread_barrier_wait(pthread_barrier_t *barrier);
int topsync_pthread_barrier_destroy(pthread_barrier_t *barrier);

/* "topsync:ALGORITHM/WAIT" for a barrier topsync runs, "glibc" for one
 * glibc runs, "invalid" for one never initialized or destroyed. */
const char *topsync_pthread_barrier_implementation(pthread_barrier_t *barrier);

#ifdef __cplusplus
}
#endif

#endif /* TOPSYNC_PTHREAD_H */
