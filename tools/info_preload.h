/* topsync-info --preload (info_preload.c). */
#ifndef TOPSYNC_TOOLS_INFO_PRELOAD_H
#define TOPSYNC_TOOLS_INFO_PRELOAD_H

#include <stdio.h>

/* The command that runs `argv` (NULL-terminated; NULL: each library
 * available) with the right topsync library preloaded, under `launcher`
 * ("mpirun", "mpiexec", "srun"; NULL: the MPI's own). Returns 0, 1 when
 * no library serves the program or none is found, 2 on bad input. */
int ts_info_preload(char *const *argv, const char *launcher, FILE *out);

#endif
