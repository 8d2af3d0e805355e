/*
 * Private: the one registry of live handles (barriers, RCL runtimes, RCL
 * servers), so that a destroyed or foreign handle handed to a set-up call
 * is refused with a message, never dereferenced. docs/design.md section
 * "Layers" (base).
 */
#ifndef TOPSYNC_SRC_BASE_REGISTRY_H
#define TOPSYNC_SRC_BASE_REGISTRY_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/* Embedded in each handle. The uid tells a new handle at a recycled address
 * from the old one (RCL clients keep (server, uid) pairs). */
typedef struct ts_registry_link {
    struct ts_registry_link *next;
    uint64_t uid;
} ts_registry_link_t;

typedef struct ts_registry {
    pthread_mutex_t mutex;
    ts_registry_link_t *head;
    uint64_t next_uid;
} ts_registry_t;

#define TS_REGISTRY_INITIALIZER            \
    {                                      \
        PTHREAD_MUTEX_INITIALIZER, NULL, 1 \
    }

/* A fresh uid, before the handle is added (its threads may need it). */
uint64_t ts_registry_new_uid(ts_registry_t *r);
/* Make the handle live / not live. Removing one that is not there is a no-op. */
void ts_registry_add(ts_registry_t *r, ts_registry_link_t *link);
void ts_registry_remove(ts_registry_t *r, ts_registry_link_t *link);
/* Remove `link` if it is live and say whether it was: of two threads that
 * destroy one handle at once, exactly one takes it. */
bool ts_registry_take(ts_registry_t *r, const ts_registry_link_t *link);
/* Is `link` a live handle's link? Compares addresses only: a pointer to
 * freed or foreign memory is never read. Takes the mutex. */
bool ts_registry_contains(ts_registry_t *r, const ts_registry_link_t *link);
/* The live handle with this uid, or NULL; the caller holds r->mutex for as
 * long as it uses what it found. */
ts_registry_link_t *ts_registry_find_uid_locked(ts_registry_t *r, uint64_t uid);

#endif
