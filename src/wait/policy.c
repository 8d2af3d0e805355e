/*
 * The wait policy's words: TOPSYNC_WAIT, topsync_wait_policy_parse and its
 * inverse, and the resolution of DEFAULT. docs/design.md section 2.
 */
#include <errno.h>
#include <strings.h>

#include <topsync/wait.h>

#include "base/env.h"
#include "base/error.h"
#include "base/keywords.h"
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
    static const ts_keyword_t words[] = {
        {"spin", TOPSYNC_WAIT_SPIN, false},
        {"yield", TOPSYNC_WAIT_YIELD, false},
        {"block", TOPSYNC_WAIT_BLOCK, false},
        {"default", TOPSYNC_WAIT_DEFAULT, true},
        {NULL, 0, false},
    };
    int value;
    int rc = ts_keyword_parse(words, "wait policy", name, &value);
    if (rc == 0)
        *out = (topsync_wait_policy_t)value;
    return rc;
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
