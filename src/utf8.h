/*
 * UTF-8 validity, for JSON writers: a string from the user (a file path) may
 * hold any bytes, and JSON must be UTF-8. Header-only, so the tools can use
 * it too. docs/design.md, "Errors and messages".
 */
#ifndef TOPSYNC_UTF8_H
#define TOPSYNC_UTF8_H

#include <stddef.h>

/* The length (1-4) of the well-formed UTF-8 sequence at s, or 0 when the
 * bytes there are not one (RFC 3629: no overlong forms, no surrogates,
 * nothing above U+10FFFF). s is NUL-terminated. */
static inline size_t ts_utf8_sequence(const unsigned char *s)
{
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    size_t n;
    unsigned char lo = 0x80, hi = 0xbf; /* the range of the second byte */
    if (c >= 0xc2 && c <= 0xdf)
        n = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        lo = c == 0xe0 ? 0xa0 : 0x80;
        hi = c == 0xed ? 0x9f : 0xbf;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        lo = c == 0xf0 ? 0x90 : 0x80;
        hi = c == 0xf4 ? 0x8f : 0xbf;
    } else
        return 0;
    if (s[1] < lo || s[1] > hi)
        return 0;
    for (size_t k = 2; k < n; k++)
        if (s[k] < 0x80 || s[k] > 0xbf)
            return 0;
    return n;
}

#endif /* TOPSYNC_UTF8_H */
