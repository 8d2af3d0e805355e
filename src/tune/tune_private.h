/* Private to src/tune: what auto.c and tuning.c share. */
#ifndef TOPSYNC_SRC_TUNE_PRIVATE_H
#define TOPSYNC_SRC_TUNE_PRIVATE_H

#include <stdio.h>

#include <topsync/groups.h>
#include <topsync/tune.h>

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

/* The file's "collectives" array (tuning_coll.c): read into tu (0, or -1
 * with why), written after the other members (nothing when empty). */
int ts_tuning_read_colls(topsync_tuning_t *tu, const ts_json *colls, char *why, size_t len);
void ts_tuning_write_colls(FILE *f, const topsync_tuning_t *tu);

/* topsync_tuning_candidates on ready-made groups (NULL: flat). */
unsigned ts_tuning_candidates_of(const topsync_groups_t *groups, char (*names)[96], unsigned max);

#endif
