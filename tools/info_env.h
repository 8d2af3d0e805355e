/* topsync-info --env (info_env.c). */
#ifndef TOPSYNC_TOOLS_INFO_ENV_H
#define TOPSYNC_TOOLS_INFO_ENV_H

#include <stdio.h>

/* The table, then whether the library's variables are valid as set:
 * 0, or 1 when one is not (the message says which). */
int ts_info_env(FILE *out);

#endif
