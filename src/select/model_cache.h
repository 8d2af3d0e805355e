/*
 * Private: auto's model-step answers kept on disk beside the tuning file,
 * so that a later process (every rank of the next MPI job) does not
 * simulate the same case again. docs/design.md section 1, "auto".
 */
#ifndef TOPSYNC_SRC_SELECT_MODEL_CACHE_H
#define TOPSYNC_SRC_SELECT_MODEL_CACHE_H

#include <stdbool.h>
#include <stddef.h>

/* This build of topsync (the file that holds this code: inode, size,
 * mtime), for the keys: a rebuilt library, in development under one
 * version number, must not read the answers of the one before. */
const char *ts_model_cache_build(void);

/* The cache file for the tuning file at tuning_path (same directory,
 * "auto-model-FINGERPRINT.tsv"); false when it has no directory part. */
bool ts_model_cache_path(const char *tuning_path, const char *fingerprint, char *buf, size_t len);

/* The answer stored under key: true with algorithm ("" when the rules
 * decided) and explain filled; false when there is none or the file
 * cannot be read. */
bool ts_model_cache_find(const char *path, const char *key, char *algorithm, size_t algorithm_len,
                         char *explain, size_t explain_len);

/* Store an answer under key, replacing an older one and keeping the 63
 * newest others; written beside and renamed over the file, so a reader sees
 * the old file or the new one whole. Failures are ignored: it is a cache. */
void ts_model_cache_store(const char *path, const char *key, const char *algorithm,
                          const char *explain);

#endif
