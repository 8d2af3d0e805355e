/*
 * topsync wait policies: how a participant of a barrier, or an RCL client
 * or server, waits for another (spin, then yield, then sleep on a futex).
 * barrier.h and rcl.h include this header; docs/design.md section 2.
 */
#ifndef TOPSYNC_WAIT_H
#define TOPSYNC_WAIT_H

#include <topsync/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How a participant waits for another. */
typedef enum topsync_wait_policy {
    TOPSYNC_WAIT_DEFAULT = 0, /* $TOPSYNC_WAIT, else block */
    TOPSYNC_WAIT_SPIN,        /* spin with a CPU pause; never gives the core up */
    TOPSYNC_WAIT_YIELD,       /* spin a while, then sched_yield() in a loop */
    TOPSYNC_WAIT_BLOCK,       /* spin a while, yield a little, then sleep on a futex */
} topsync_wait_policy_t;

/*
 * What an idle hook (topsync_barrier_options_t.idle) returns to be called
 * again soon: its interval goes back to the shortest (about 1 us) and the
 * waiter does not sleep on the futex meanwhile. 0 lets the interval grow;
 * any other non-zero value abandons the wait.
 */
#define TOPSYNC_IDLE_AGAIN 2

/* Parse "spin" | "yield" | "block" (or "default"). -EINVAL lists the valid ones. */
int topsync_wait_policy_parse(const char *name, topsync_wait_policy_t *out);
const char *topsync_wait_policy_to_string(topsync_wait_policy_t policy);

#ifdef __cplusplus
}
#endif

#endif
