/* Private to src/tune: what auto.c and tuning.c share. */
#ifndef TOPSYNC_SRC_TUNE_PRIVATE_H
#define TOPSYNC_SRC_TUNE_PRIVATE_H

#include <topsync/groups.h>

/* topsync_tuning_candidates on ready-made groups (NULL: flat). */
unsigned ts_tuning_candidates_of(const topsync_groups_t *groups, char (*names)[96], unsigned max);

#endif
