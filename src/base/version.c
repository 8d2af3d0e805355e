/* The loaded library's version (common.h), compiled in here so that a
 * program can tell which build it runs against. */
#include <topsync/common.h>

const char *topsync_version(void)
{
    return TOPSYNC_VERSION_STRING;
}
