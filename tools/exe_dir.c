/*
 * The running executable's directory: the one place the tools and the
 * benchmarks learn where they were installed, to find their helpers and
 * the libraries beside them. docs/design.md, "Layers".
 */
#define _GNU_SOURCE
#include <string.h>
#include <unistd.h>

#include "exe_dir.h"

int tools_exe_dir(char *dir, size_t size)
{
    if (size < 2)
        return -1;
    ssize_t len = readlink("/proc/self/exe", dir, size - 1);
    if (len <= 0)
        return -1;
    dir[len] = '\0';
    char *slash = strrchr(dir, '/');
    if (!slash)
        return -1;
    slash[1] = '\0';
    return 0;
}
