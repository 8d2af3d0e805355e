#include "error.h"

#include <stdarg.h>
#include <stdio.h>

#include <topsync/common.h>

static _Thread_local char last_message[512];

int ts_fail(int err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_message, sizeof last_message, fmt, ap);
    va_end(ap);
    return -err;
}

const char *topsync_error_message(void)
{
    return last_message;
}
