/*
 * The live-handle registry (registry.h): a list under one mutex. Only
 * set-up and teardown calls ask it; hot paths check a handle's own magic.
 */
#include "base/registry.h"

#include <stddef.h>

uint64_t ts_registry_new_uid(ts_registry_t *r)
{
    pthread_mutex_lock(&r->mutex);
    uint64_t uid = r->next_uid++;
    pthread_mutex_unlock(&r->mutex);
    return uid;
}

void ts_registry_add(ts_registry_t *r, ts_registry_link_t *link)
{
    pthread_mutex_lock(&r->mutex);
    link->next = r->head;
    r->head = link;
    pthread_mutex_unlock(&r->mutex);
}

void ts_registry_remove(ts_registry_t *r, ts_registry_link_t *link)
{
    (void)ts_registry_take(r, link);
}

bool ts_registry_take(ts_registry_t *r, const ts_registry_link_t *link)
{
    bool found = false;
    pthread_mutex_lock(&r->mutex);
    for (ts_registry_link_t **p = &r->head; *p; p = &(*p)->next)
        if (*p == link) {
            *p = (*p)->next;
            found = true;
            break;
        }
    pthread_mutex_unlock(&r->mutex);
    return found;
}

bool ts_registry_contains(ts_registry_t *r, const ts_registry_link_t *link)
{
    pthread_mutex_lock(&r->mutex);
    const ts_registry_link_t *p = r->head;
    while (p && p != link)
        p = p->next;
    pthread_mutex_unlock(&r->mutex);
    return p != NULL;
}

ts_registry_link_t *ts_registry_find_uid_locked(ts_registry_t *r, uint64_t uid)
{
    for (ts_registry_link_t *p = r->head; p; p = p->next)
        if (p->uid == uid)
            return p;
    return NULL;
}
