/*
 * Private to libtopsync-mpi: the node's shared segment, created by node
 * rank 0. Security: the name carries 128 random bits (getrandom), so that
 * no other process can guess it before it is unlinked; the file is created
 * with O_CREAT | O_EXCL and mode 0600, so that a file someone planted under
 * that name is never opened, truncated or reused, and no other user can
 * open ours. The library unlinks it as soon as every rank has mapped it.
 * The why: docs/design.md section 8.20.
 */
#ifndef TOPSYNC_MPI_SEGMENT_H
#define TOPSYNC_MPI_SEGMENT_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#define TS_SEGMENT_PREFIX "/topsync-"
#define TS_SEGMENT_NAME_LEN 64 /* "/topsync-" + pid + "-" + 32 hex digits + NUL fits */

/* Create a new segment of `size` bytes under a fresh name (written to
 * name); returns its fd, or -errno. */
int ts_segment_create(char *name, size_t name_len, size_t size);

/* The same under a given name: -EEXIST when anything exists there. */
int ts_segment_create_named(const char *name, size_t size);

/* The creator's pid in a segment name, or -1 when the name is not one of
 * ours. */
pid_t ts_segment_creator(const char *name);

/* Remove the segments in `dir` (normally "/dev/shm") owned by this user
 * whose creator is dead; returns how many. With `report`, each segment of
 * ours is named there, removed or kept (and why); with `dry_run`, nothing
 * is removed (topsync-info --cleanup [--dry-run]). */
int ts_segment_sweep(const char *dir, FILE *report, int dry_run);

#endif
