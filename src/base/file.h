/*
 * Private: reading a whole file with a size cap, the one reader behind the
 * XML topology, the latency table, the tuning file and topsync-info --mpi.
 * It records no message: each caller names its file in its own words.
 * docs/design.md section "Layers" (base).
 */
#ifndef TOPSYNC_SRC_BASE_FILE_H
#define TOPSYNC_SRC_BASE_FILE_H

#include <stddef.h>

/* Refuse anything but a regular file (a FIFO or a device). */
#define TS_FILE_REGULAR_ONLY 1u

/*
 * Read all of `path` into a new NUL-terminated buffer (*text, free() it;
 * *len bytes, NUL bytes inside are kept). Returns 0, or a negative errno
 * with nothing allocated: open()'s or read()'s own (-ENOENT, -EACCES,
 * -EIO, ...), -EFBIG when the file holds more than max_bytes, -EINVAL
 * for a file that is not regular under TS_FILE_REGULAR_ONLY, -ENOMEM.
 */
int ts_file_read(const char *path, size_t max_bytes, unsigned flags, char **text, size_t *len);

#endif
