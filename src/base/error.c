#include "base/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <topsync/common.h>

static _Thread_local char last_message[512];

int ts_fail(int err, const char *fmt, ...)
{
    /* Format aside first: a message may quote the previous one. */
    char formatted[sizeof last_message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(formatted, sizeof formatted, fmt, ap);
    va_end(ap);
    memcpy(last_message, formatted, sizeof last_message);
    return -err;
}

const char *topsync_error_message(void)
{
    return last_message;
}
