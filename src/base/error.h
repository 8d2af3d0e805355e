/* Private: recording the message behind a negative errno (see common.h). */
#ifndef TOPSYNC_SRC_ERROR_H
#define TOPSYNC_SRC_ERROR_H

#include <errno.h>
#include <stdlib.h>

/* Record a printf-style message for topsync_error_message(); returns -err. */
int ts_fail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * The one rule for every TOPSYNC_* variable: unset and empty are the same
 * (NULL here), and a value is taken exactly as written: surrounding spaces
 * make it invalid (" 10" and "10 " alike), so that the error message, not
 * a silent trim, tells the user.
 */
static inline const char *ts_getenv(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}
/* A value with a leading space, which strtol/strtod would silently skip. */
static inline int ts_env_leading_space(const char *v)
{
    return *v == ' ' || *v == '\t' || *v == '\n' || *v == '\v' || *v == '\f' || *v == '\r';
}

#endif
