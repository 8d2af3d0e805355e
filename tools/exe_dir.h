/* The directory of the running executable (exe_dir.c). */
#ifndef TOPSYNC_TOOLS_EXE_DIR_H
#define TOPSYNC_TOOLS_EXE_DIR_H

#include <stddef.h>

/* /proc/self/exe's directory, with a trailing slash, into dir (size
 * bytes): where a tool looks for its helpers and libraries, installed
 * (bin/ beside lib/ and libexec/) or in the build tree. 0, or -1. */
int tools_exe_dir(char *dir, size_t size);

#endif
