/* Private: recording the message behind a negative errno (see common.h). */
#ifndef TOPSYNC_SRC_ERROR_H
#define TOPSYNC_SRC_ERROR_H

#include <errno.h>
#include <stdlib.h>

/* Record a printf-style message for topsync_error_message(); returns -err. */
int ts_fail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
