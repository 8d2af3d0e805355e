/*
 * libtopsync-pthread: pthread_barrier_init/wait/destroy on topsync's
 * barriers, for unmodified programs (LD_PRELOAD, or linked before libc).
 * The why: docs/design.md section 8.22.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <topsync/barrier.h>
#include <topsync/pthread.h>

#include "barrier/barrier_private.h"
#include "wait/wait.h"

#define TS_PTHREAD_MAGIC 0x7473796e63627231ull     /* "tsyncbr1" */
#define TS_PTHREAD_DESTROYED 0x7473796e63646561ull /* "tsyncdea": destroyed */

struct ts_pthread_barrier {
    /* tickets drawn so far; on a line of its own (allocated line-aligned) */
    _Atomic uint64_t tickets;
    unsigned n;
    size_t line;
    topsync_barrier_t *instance[2];
    ts_wait gate_policy;
    unsigned char *gates; /* [2][n] lines, each a ts_word at its start */
    void *allocation;
};

/* The 32 bytes of pthread_barrier_t as topsync uses them. */
struct ts_pthread_handle {
    struct ts_pthread_barrier *state;
    uint64_t unused[2];
    uint64_t check; /* state xor magic; bytes 24..31, beyond glibc's 20 */
};
_Static_assert(sizeof(struct ts_pthread_handle) <= sizeof(pthread_barrier_t),
               "topsync's handle fits in pthread_barrier_t");
_Static_assert(offsetof(struct ts_pthread_handle, check) >= 20,
               "the check word lies beyond glibc's barrier fields");

typedef int (*init_fn)(pthread_barrier_t *, const pthread_barrierattr_t *, unsigned);
typedef int (*wait_fn)(pthread_barrier_t *);
typedef int (*destroy_fn)(pthread_barrier_t *);

static struct {
    init_fn init;
    wait_fn wait;
    destroy_fn destroy;
    int environment_bad; /* a TOPSYNC_* variable is bad: glibc for all */
} glibc;
static pthread_once_t glibc_once = PTHREAD_ONCE_INIT;

static void glibc_resolve(void)
{
    glibc.init = (init_fn)dlsym(RTLD_NEXT, "pthread_barrier_init");
    glibc.wait = (wait_fn)dlsym(RTLD_NEXT, "pthread_barrier_wait");
    glibc.destroy = (destroy_fn)dlsym(RTLD_NEXT, "pthread_barrier_destroy");
    if (topsync_environment_check() < 0) {
        glibc.environment_bad = 1;
        fprintf(stderr, "libtopsync-pthread: %s; pthread barriers use glibc's implementation\n",
                topsync_error_message());
    }
}

static struct ts_pthread_handle *handle(pthread_barrier_t *b)
{
    return (struct ts_pthread_handle *)(void *)b;
}

enum ts_handle_kind { TS_HANDLE_GLIBC, TS_HANDLE_OURS, TS_HANDLE_DESTROYED };

/*
 * Whose barrier this is. The check word is 0 for glibc's barriers (init
 * clears it), the state pointer xor the magic for ours, or the destroyed
 * mark. Anything else means the program wrote into a barrier of ours (as
 * glibc's white-box tests write its private fields): abort with a message
 * rather than let glibc divide by a count it never set.
 */
static enum ts_handle_kind handle_kind(pthread_barrier_t *b, struct ts_pthread_barrier **state)
{
    struct ts_pthread_handle *h = handle(b);
    *state = NULL;
    if (h->check == 0)
        return TS_HANDLE_GLIBC;
    if (h->check == TS_PTHREAD_DESTROYED && h->state == NULL)
        return TS_HANDLE_DESTROYED;
    if (h->state && h->check == ((uint64_t)(uintptr_t)h->state ^ TS_PTHREAD_MAGIC)) {
        *state = h->state;
        return TS_HANDLE_OURS;
    }
    fprintf(stderr,
            "libtopsync-pthread: the pthread_barrier_t at %p is corrupted: its state "
            "pointer no longer matches its check word (did the program write into the "
            "barrier, or copy it?); aborting\n",
            (void *)b);
    abort();
}

static struct ts_pthread_barrier *ours(pthread_barrier_t *b)
{
    struct ts_pthread_barrier *s;
    handle_kind(b, &s);
    return s;
}

static ts_word *gate(const struct ts_pthread_barrier *s, unsigned instance, unsigned rank)
{
    return (ts_word *)(s->gates + ((size_t)instance * s->n + rank) * s->line);
}

static void state_free(struct ts_pthread_barrier *s)
{
    topsync_barrier_destroy(s->instance[0]);
    topsync_barrier_destroy(s->instance[1]);
    free(s->allocation);
}

/* 0, or a positive errno: EINVAL, ENOMEM (the caller then tries glibc). */
static int state_create(struct ts_pthread_barrier **out, unsigned n)
{
    topsync_barrier_options_t o;
    topsync_barrier_options_init(&o);
    topsync_barrier_t *first = NULL, *second = NULL;
    const char *named = getenv("TOPSYNC_BARRIER");
    if (!named || !*named || !strcasecmp(named, "auto")) {
        /* auto, among the algorithms the last arrival completes (above) */
        o.algorithm = "auto";
        if (topsync_barrier_create(&first, n, &o) < 0)
            return ENOMEM;
        const char *chosen = topsync_barrier_algorithm(first);
        if (strcmp(chosen, "sense-reversing") && strcmp(chosen, "combining-tree")) {
            topsync_barrier_destroy(first);
            first = NULL;
            o.algorithm = "combining-tree";
        }
    }
    if ((!first && topsync_barrier_create(&first, n, &o) < 0) ||
        topsync_barrier_create(&second, n, &o) < 0) {
        topsync_barrier_destroy(first);
        return ENOMEM;
    }
    /* a timeout then counts the threads missing instead of naming ranks */
    first->ranks_by_arrival = second->ranks_by_arrival = true;
    size_t line = first->line;
    size_t bytes = line /* tickets */ + sizeof(struct ts_pthread_barrier) + line +
                   (size_t)2 * n * line + line /* alignment */;
    void *mem = calloc(1, bytes);
    if (!mem) {
        topsync_barrier_destroy(first);
        topsync_barrier_destroy(second);
        return ENOMEM;
    }
    uintptr_t at = ((uintptr_t)mem + line - 1) & ~(uintptr_t)(line - 1);
    struct ts_pthread_barrier *s = (struct ts_pthread_barrier *)at;
    s->allocation = mem;
    s->n = n;
    s->line = line;
    s->instance[0] = first;
    s->instance[1] = second;
    s->gate_policy = first->wait;
    /* the gates start after the line(s) of the state itself: tickets stay alone */
    size_t header = (sizeof *s + line - 1) / line * line;
    s->gates = (unsigned char *)at + header;
    atomic_init(&s->tickets, 0);
    *out = s;
    return 0;
}

int topsync_pthread_barrier_init(pthread_barrier_t *barrier, const pthread_barrierattr_t *attr,
                                 unsigned count)
{
    pthread_once(&glibc_once, glibc_resolve);
    if (!barrier || count == 0)
        return EINVAL;
    int pshared = PTHREAD_PROCESS_PRIVATE;
    if (attr && pthread_barrierattr_getpshared(attr, &pshared) != 0)
        return EINVAL;
    struct ts_pthread_barrier *s = NULL;
    if (pshared == PTHREAD_PROCESS_PRIVATE && !glibc.environment_bad &&
        state_create(&s, count) == 0) {
        struct ts_pthread_handle *h = handle(barrier);
        memset(barrier, 0, sizeof *barrier);
        h->state = s;
        h->check = (uint64_t)(uintptr_t)s ^ TS_PTHREAD_MAGIC;
        return 0;
    }
    if (!glibc.init)
        return ENOMEM;
    int rc = glibc.init(barrier, attr, count);
    if (rc == 0)
        handle(barrier)->check = 0; /* glibc's now, whatever was there before */
    return rc;
}

int topsync_pthread_barrier_wait(pthread_barrier_t *barrier)
{
    struct ts_pthread_barrier *s = NULL;
    enum ts_handle_kind kind = barrier ? handle_kind(barrier, &s) : TS_HANDLE_DESTROYED;
    if (kind == TS_HANDLE_DESTROYED)
        return EINVAL;
    if (!s) {
        pthread_once(&glibc_once, glibc_resolve);
        return glibc.wait ? glibc.wait(barrier) : EINVAL;
    }
    /* relaxed: the ticket only names a slot; ordering comes from the gate
     * (acquire below) and the instance's own barrier */
    uint64_t ticket = atomic_fetch_add_explicit(&s->tickets, 1, memory_order_relaxed);
    /* a copy: once our gate is published, destroy may free the state, and
     * ts_publish still reads the policy after its store */
    const ts_wait policy = s->gate_policy;
    uint64_t episode = ticket / s->n;
    unsigned rank = (unsigned)(ticket % s->n);
    unsigned instance = (unsigned)(episode & 1);
    uint32_t use = (uint32_t)(episode >> 1);
    ts_word *g = gate(s, instance, rank);
    /* acquire: pairs with the release publish of the slot's previous holder
     * below, so its wait on the instance is over before ours begins */
    ts_wait_reach(g, use, &policy);
    topsync_barrier_wait(s->instance[instance], rank);
    /* release: pairs with the acquire in the next holder's ts_wait_reach and
     * in destroy; nothing of the state is read after it */
    ts_publish(g, use + 1, &policy);
    return rank == 0 ? PTHREAD_BARRIER_SERIAL_THREAD : 0;
}

int topsync_pthread_barrier_destroy(pthread_barrier_t *barrier)
{
    struct ts_pthread_barrier *s = NULL;
    enum ts_handle_kind kind = barrier ? handle_kind(barrier, &s) : TS_HANDLE_DESTROYED;
    if (kind == TS_HANDLE_DESTROYED)
        return EINVAL;
    if (!s) {
        pthread_once(&glibc_once, glibc_resolve);
        return glibc.destroy ? glibc.destroy(barrier) : EINVAL;
    }
    /* relaxed: destroy may only race with threads leaving (POSIX) */
    uint64_t tickets = atomic_load_explicit(&s->tickets, memory_order_relaxed);
    if (tickets % s->n != 0)
        return EBUSY; /* threads are blocked in an unfinished episode */
    uint64_t episodes = tickets / s->n;
    for (unsigned instance = 0; instance < 2; instance++) {
        uint32_t uses = (uint32_t)((episodes + 1 - instance) / 2);
        for (unsigned r = 0; r < s->n; r++)
            /* acquire: pairs with the leaver's release publish; it is out */
            ts_wait_reach(gate(s, instance, r), uses, &s->gate_policy);
    }
    /* a late wait or a second destroy finds the destroyed mark: EINVAL */
    struct ts_pthread_handle *h = handle(barrier);
    h->state = NULL;
    h->check = TS_PTHREAD_DESTROYED;
    state_free(s);
    return 0;
}

/* The POSIX names: what an unmodified program calls. */
int pthread_barrier_init(pthread_barrier_t *barrier, const pthread_barrierattr_t *attr,
                         unsigned count)
{
    return topsync_pthread_barrier_init(barrier, attr, count);
}

int pthread_barrier_wait(pthread_barrier_t *barrier)
{
    return topsync_pthread_barrier_wait(barrier);
}

int pthread_barrier_destroy(pthread_barrier_t *barrier)
{
    return topsync_pthread_barrier_destroy(barrier);
}

/* Which implementation runs a barrier: "topsync:ALGORITHM/WAIT" or "glibc". */
const char *topsync_pthread_barrier_implementation(pthread_barrier_t *barrier)
{
    struct ts_pthread_barrier *s = barrier ? ours(barrier) : NULL;
    static _Thread_local char name[160];
    if (!s)
        return "glibc";
    snprintf(name, sizeof name, "topsync:%s/%s", topsync_barrier_algorithm(s->instance[0]),
             topsync_barrier_wait_policy_name(s->instance[0]));
    return name;
}
