/*
 * The wait policy's words: TOPSYNC_WAIT, topsync_wait_policy_parse and its
 * inverse, and the resolution of DEFAULT. docs/design.md section 2.
 */
#include <errno.h>
#include <strings.h>

#include <topsync/wait.h>

#include "base/error.h"
#include "wait/wait.h"

int ts_wait_policy_resolve(topsync_wait_policy_t *policy)
{
    if (*policy == TOPSYNC_WAIT_DEFAULT) {
        const char *env = ts_getenv("TOPSYNC_WAIT");
        if (env && topsync_wait_policy_parse(env, policy) < 0)
            return ts_fail(EINVAL, "TOPSYNC_WAIT: %s", topsync_error_message());
        if (*policy == TOPSYNC_WAIT_DEFAULT)
            *policy = TOPSYNC_WAIT_BLOCK;
    } else if (*policy != TOPSYNC_WAIT_SPIN && *policy != TOPSYNC_WAIT_YIELD &&
               *policy != TOPSYNC_WAIT_BLOCK) {
        return ts_fail(EINVAL, "invalid wait policy value %d; valid: spin, yield, block",
                       (int)*policy);
    }
    return 0;
}

int topsync_wait_policy_parse(const char *name, topsync_wait_policy_t *out)
{
    if (!name || !out)
        return ts_fail(EINVAL, "topsync_wait_policy_parse: NULL argument");
    if (!strcasecmp(name, "spin"))
        *out = TOPSYNC_WAIT_SPIN;
    else if (!strcasecmp(name, "yield"))
        *out = TOPSYNC_WAIT_YIELD;
    else if (!strcasecmp(name, "block"))
        *out = TOPSYNC_WAIT_BLOCK;
    else if (!strcasecmp(name, "default"))
        *out = TOPSYNC_WAIT_DEFAULT;
    else
        return ts_fail(EINVAL, "unknown wait policy '%s'; valid: spin, yield, block", name);
    return 0;
}

const char *topsync_wait_policy_to_string(topsync_wait_policy_t p)
{
    switch (p) {
    case TOPSYNC_WAIT_SPIN: return "spin";
    case TOPSYNC_WAIT_YIELD: return "yield";
    case TOPSYNC_WAIT_BLOCK: return "block";
    case TOPSYNC_WAIT_DEFAULT: return "default";
    }
    return "?";
}

