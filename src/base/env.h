/*
 * Private: the one way every TOPSYNC_* variable is read (issue 37 item 12).
 * Unset and empty are the same; a value is taken exactly as written;
 * words are ASCII case-insensitive; numbers are decimal digits (seconds
 * may have a fraction); a word repeated in a list is refused; a TOPSYNC_*
 * variable topsync does not read is one warning naming the closest one.
 * docs/design.md section "Layers" (base).
 */
#ifndef TOPSYNC_SRC_BASE_ENV_H
#define TOPSYNC_SRC_BASE_ENV_H

#include <stdbool.h>

/* The value of `name`, NULL when unset or empty. The first call in a
 * process also warns, once, about TOPSYNC_* variables nobody reads. */
const char *ts_getenv(const char *name);

/* A whole number written in decimal digits only (no sign, spaces, 0x or
 * exponent) from min to max. 0 with *out untouched when unset, 1 when
 * set, -EINVAL with "NAME='v' is not valid; valid: a whole number of
 * <unit> from min to max ..." when not. */
int ts_env_whole(const char *name, long min, long max, const char *unit, long *out);

/* The same for seconds: digits with an optional fraction ("30", "0.5"). */
int ts_env_seconds(const char *name, double max, double *out);

/* TOPSYNC_VERBOSE, read by the MPI and pthread libraries: 0 when unset,
 * 0, 1 or 2 as set, -1 when anything else (each library says so). */
int ts_env_verbose(void);

/* The strict form behind ts_env_whole, for a value already in hand. */
bool ts_env_parse_whole(const char *v, long min, long max, long *out);

#endif
