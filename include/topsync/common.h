/*
 * topsync: common definitions and the error convention of the whole API.
 *
 * Error convention (every topsync function, like hwloc's):
 *   - setup and teardown functions return 0 on success or a negative errno
 *     (-EINVAL for bad arguments, -ENOMEM, -ENOSYS, ...);
 *   - on failure they also record a human-readable sentence, retrievable in
 *     the same thread with topsync_error_message() until the next failing
 *     call in that thread (for an unknown name it lists the valid ones);
 *   - hot paths (topsync_barrier_wait) return void and cannot fail once the
 *     object was set up successfully.
 */
#ifndef TOPSYNC_COMMON_H
#define TOPSYNC_COMMON_H

#ifdef __cplusplus
extern "C" {
#endif

/* The version of these headers (CMake reads it from here; see CHANGELOG.md).
 * The major number is the shared library's SONAME version. */
#define TOPSYNC_VERSION_MAJOR 0
#define TOPSYNC_VERSION_MINOR 1
#define TOPSYNC_VERSION_PATCH 0
#define TOPSYNC_VERSION_STRING "0.1.0"

/* The version of the library actually loaded ("0.1.0"), which may differ
 * from TOPSYNC_VERSION_STRING when a program runs against another build
 * than it was compiled with. Never fails. */
const char *topsync_version(void);

/*
 * The message that explains the last failure of a topsync call in the
 * calling thread ("" when none failed yet). The string is owned by topsync,
 * stays valid until the next failing topsync call in this thread.
 */
const char *topsync_error_message(void);

#ifdef __cplusplus
}
#endif

#endif /* TOPSYNC_COMMON_H */
