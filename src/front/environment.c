/*
 * topsync_environment_check: every TOPSYNC_* variable of every part
 * (barriers, auto, collectives, RCL) checked at once, for programs that want bad
 * settings refused up front (the MPI and pthread libraries, topsync-tune).
 * The one file above all parts. docs/design.md, "Layers".
 */
#include <errno.h>

#include <topsync/barrier.h>
#include <topsync/collectives.h>
#include <topsync/rcl.h>

#include "barrier/barrier_private.h"
#include "base/env.h"
#include "base/error.h"
#include "front/environment.h"
#include "select/auto.h"

int topsync_environment_check(void)
{
    return ts_environment_check(false, TS_ENV_ALL);
}

int ts_environment_check(bool barrier_mpi_valid, unsigned parts)
{
    if ((parts & TS_ENV_BARRIER) &&
        (ts_barrier_environment_check(barrier_mpi_valid) < 0 || ts_auto_steps_check() < 0))
        return -EINVAL;
    const char *placement = ts_getenv("TOPSYNC_RCL_PLACEMENT");
    topsync_rcl_policy_t rcl_policy;
    if ((parts & TS_ENV_RCL) && placement && topsync_rcl_policy_parse(placement, &rcl_policy) < 0)
        return ts_fail(EINVAL, "TOPSYNC_RCL_PLACEMENT: %s", topsync_error_message());
    long coll_bytes;
    if ((parts & TS_ENV_COLL) &&
        ts_env_whole("TOPSYNC_COLL_MAX_BYTES", 1, TOPSYNC_COLL_MAX_BYTES_LIMIT, "bytes",
                     &coll_bytes) < 0)
        return -EINVAL;
    return 0;
}
