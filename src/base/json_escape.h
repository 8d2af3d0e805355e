/*
 * Escaping a C string into a JSON string literal, for every JSON writer of
 * topsync (the tuning file's, topsync-info's): quotes and backslashes
 * escaped, control characters as \uXXXX, and a byte that starts no
 * well-formed UTF-8 sequence (a path in another encoding) as U+FFFD, since
 * JSON is UTF-8. Header-only, so the tools can use it too. docs/design.md,
 * "Errors and messages".
 */
#ifndef TOPSYNC_JSON_ESCAPE_H
#define TOPSYNC_JSON_ESCAPE_H

#include <stddef.h>
#include <stdio.h>

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

/* The JSON text of the character at s (not NUL) into out, NUL-terminated;
 * returns how many bytes of s it stands for. */
static inline size_t ts_json_escape_char(const unsigned char *s, char out[8])
{
    size_t seq = ts_utf8_sequence(s);
    if (*s == '"' || *s == '\\') {
        out[0] = '\\', out[1] = (char)*s, out[2] = '\0';
        return 1;
    }
    if (*s < 0x20) {
        snprintf(out, 8, "\\u%04x", *s);
        return 1;
    }
    if (seq == 0) {
        snprintf(out, 8, "\\ufffd");
        return 1;
    }
    for (size_t k = 0; k < seq; k++)
        out[k] = (char)s[k];
    out[seq] = '\0';
    return seq;
}

#endif /* TOPSYNC_JSON_ESCAPE_H */
