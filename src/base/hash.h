/*
 * Private: FNV-1a, the one hash of the library and the MPI drop-in. Not
 * for security: for fingerprints (of a machine, a placement, a segment's
 * barrier) and for the digests ranks compare at a communicator's set-up.
 * Start from TS_FNV1A32_OFFSET or TS_FNV1A64_OFFSET (or a hash so far to
 * extend it). docs/design.md section "Layers" (base).
 */
#ifndef TOPSYNC_SRC_BASE_HASH_H
#define TOPSYNC_SRC_BASE_HASH_H

#include <stddef.h>
#include <stdint.h>

#define TS_FNV1A32_OFFSET 2166136261u
#define TS_FNV1A64_OFFSET 14695981039346656037ull

/* h extended by len bytes at data. */
static inline uint32_t ts_fnv1a32(uint32_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 16777619u;
    return h;
}

static inline uint64_t ts_fnv1a64(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

/* h extended by the characters of s (not its '\0'). */
static inline uint64_t ts_fnv1a64_str(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

#endif
