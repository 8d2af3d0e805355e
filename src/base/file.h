/*
 * Private: reading a whole file with a size cap, the one reader behind the
 * XML topology, the latency table, the tuning file and topsync-info --mpi;
 * and replacing a whole file, the one writer behind the tuning file and
 * auto's model cache. It records no message: each caller names its file in
 * its own words. docs/design.md section "Layers" (base).
 */
#ifndef TOPSYNC_SRC_BASE_FILE_H
#define TOPSYNC_SRC_BASE_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

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

/* The step of ts_file_replace that failed, for the caller's message. */
typedef enum {
    TS_FILE_REPLACE_DIR = 1, /* making the file's directory (and its parents) */
    TS_FILE_REPLACE_TEMP,    /* creating the new file beside it */
    TS_FILE_REPLACE_WRITE,   /* writing, flushing, syncing or renaming it */
} ts_file_replace_step;

/*
 * Replace `path` whole, or leave it as it was: its directory and parents
 * are made (0700) when missing, write(f, arg) fills a new 0600 file beside
 * it (PATH.tmp.PID.XXXXXX), which is flushed, synced when `durable`, closed
 * and renamed over path. Returns 0, or a negative errno with *failed
 * naming the step (-ENOMEM: no stream for the new file); nothing is left
 * beside path.
 */
int ts_file_replace(const char *path, bool durable, void (*write)(FILE *f, void *arg), void *arg,
                    ts_file_replace_step *failed);

#endif
