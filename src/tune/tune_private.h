/* Private to src/tune: what auto.c and tuning.c share. */
#ifndef TOPSYNC_SRC_TUNE_PRIVATE_H
#define TOPSYNC_SRC_TUNE_PRIVATE_H

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include <topsync/groups.h>
#include <topsync/tune.h>

#include "base/error.h"
#include "base/json.h"

struct topsync_tuning {
    char fingerprint[TOPSYNC_FINGERPRINT_LEN];
    char machine[320];
    topsync_tuning_entry_t *entries;
    unsigned nentries;
    topsync_tuning_coll_entry_t *colls; /* tuning_coll.c */
    unsigned ncolls;
    double *c2c; /* c2c_n x c2c_n, or NULL */
    unsigned c2c_n;
    double mlp, miss_interval_ns; /* topsync-bench c2c --mlp; 0: not measured */
};

/* The lookups' rule: with no entry of the count n, the one of the nearest
 * tuned count, the smaller on a tie. Whether an entry of `count` is a
 * better match than the best so far (of best_count; none when NULL). */
static inline bool ts_tuning_nearer(unsigned count, const unsigned *best_count, unsigned n)
{
    if (!best_count)
        return true;
    unsigned d = count > n ? count - n : n - count;
    unsigned bd = *best_count > n ? *best_count - n : n - *best_count;
    return d < bd || (d == bd && count < *best_count);
}

/* One more element at the end of *array (*count of `size` bytes each, at
 * most TOPSYNC_TUNING_MAX_ENTRIES): 0, or -ENOSPC / -ENOMEM with the
 * message, `what` naming the entries. Inline: tuning.c and tuning_coll.c
 * each call the other's functions otherwise (unit.layers refuses loops). */
static inline int ts_tuning_grow(void **array, unsigned *count, size_t size, const char *what)
{
    if (*count == TOPSYNC_TUNING_MAX_ENTRIES)
        return ts_fail(ENOSPC, "a tuning holds at most %d %sentries", TOPSYNC_TUNING_MAX_ENTRIES,
                       what);
    void *grown = realloc(*array, (*count + 1) * size);
    if (!grown)
        return ts_fail(ENOMEM, "out of memory");
    *array = grown;
    (*count)++;
    return 0;
}

/* The file's "collectives" array (tuning_coll.c): read into tu (0, or -1
 * with why), written after the other members (nothing when empty). */
int ts_tuning_read_colls(topsync_tuning_t *tu, const ts_json *colls, char *why, size_t len);
void ts_tuning_write_colls(FILE *f, const topsync_tuning_t *tu);

/* topsync_tuning_candidates on ready-made groups (NULL: flat). */
unsigned ts_tuning_candidates_of(const topsync_groups_t *groups, char (*names)[96], unsigned max);

#endif
