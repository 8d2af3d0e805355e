/*
 * Private: building a message piece by piece in a fixed buffer (auto's
 * explanations). The why: docs/design.md section 8.13.
 */
#ifndef TOPSYNC_SRC_BASE_TEXT_H
#define TOPSYNC_SRC_BASE_TEXT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/* printf at buf + used, cut at len; the new used (>= len once full, and
 * every later call then writes nothing). */
static inline size_t ts_append(char *buf, size_t len, size_t used, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static inline size_t ts_append(char *buf, size_t len, size_t used, const char *fmt, ...)
{
    if (used >= len)
        return used;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + used, len - used, fmt, ap);
    va_end(ap);
    return n < 0 ? used : used + (size_t)n;
}

#endif
