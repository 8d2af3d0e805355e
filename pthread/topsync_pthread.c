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
#include "base/env.h"
#include "front/environment.h"
#include "wait/wait.h"

#define TS_PTHREAD_MAGIC 0x7473796e63627231ull /* "tsyncbr1": in the check word */
/* In glibc's count and shared fields while the barrier is ours: its high
 * half is neither of the two values glibc stores in shared (0, 128), its
 * low half no count glibc would accept from us (see handle_kind). */
#define TS_PTHREAD_MARK 0x7473796e6d61726bull /* "tsynmark" */
/* Set in the ticket word by destroy: no ticket is drawn after it. */
#define TS_PTHREAD_DESTROYED (1ull << 63)

struct ts_pthread_barrier {
    unsigned n;
    size_t line;
    topsync_barrier_t *instance[2];
    ts_wait gate_policy;
    unsigned char *gates; /* [2][n] lines, each a ts_word at its start */
    void *allocation;
};

/*
 * The 32 bytes of pthread_barrier_t as topsync uses them. The ticket word
 * lives here, in the program's own object, rather than in the state: a
 * thread that read the state pointer just before a destroy still draws its
 * ticket from memory that outlives the destroy, and finds the destroyed bit
 * there instead of freed memory (issue 37.15).
 */
struct ts_pthread_handle {
    struct ts_pthread_barrier *state; /* bytes 0..7: glibc's in, current_round */
    uint64_t mark;                    /* 8..15: TS_PTHREAD_MARK; glibc's count, shared */
    _Atomic uint64_t tickets;         /* 16..23: drawn so far, | TS_PTHREAD_DESTROYED */
    uint64_t check;                   /* 24..31: beyond glibc's 20 bytes */
};
_Static_assert(sizeof(struct ts_pthread_handle) <= sizeof(pthread_barrier_t),
               "topsync's handle fits in pthread_barrier_t");
_Static_assert(offsetof(struct ts_pthread_handle, check) >= 20,
               "the check word lies beyond glibc's barrier fields");
_Static_assert(offsetof(struct ts_pthread_handle, mark) == 8,
               "the mark overlays glibc's count field");

typedef int (*init_fn)(pthread_barrier_t *, const pthread_barrierattr_t *, unsigned);
typedef int (*wait_fn)(pthread_barrier_t *);
typedef int (*destroy_fn)(pthread_barrier_t *);

static struct {
    init_fn init;
    wait_fn wait;
    destroy_fn destroy;
    int environment_bad; /* a TOPSYNC_* variable is bad: glibc for all */
    int verbose;         /* TOPSYNC_VERBOSE: 0, 1 (start and end lines), 2 (each barrier) */
    /* glibc stores the count at byte 8 (checked on a scratch barrier once;
     * glibc 2.23 to 2.40 do): a 0 there is a barrier glibc never set up */
    int count_at_8;
} glibc;
static pthread_once_t glibc_once = PTHREAD_ONCE_INIT;

static void glibc_resolve(void)
{
    glibc.init = (init_fn)dlsym(RTLD_NEXT, "pthread_barrier_init");
    glibc.wait = (wait_fn)dlsym(RTLD_NEXT, "pthread_barrier_wait");
    glibc.destroy = (destroy_fn)dlsym(RTLD_NEXT, "pthread_barrier_destroy");
    if (glibc.init && glibc.destroy) {
        pthread_barrier_t scratch;
        memset(&scratch, 0, sizeof scratch);
        uint32_t at_8 = 0;
        if (glibc.init(&scratch, NULL, 12345) == 0) {
            memcpy(&at_8, (unsigned char *)&scratch + 8, sizeof at_8);
            glibc.destroy(&scratch);
        }
        glibc.count_at_8 = at_8 == 12345;
    }
    /* only the barrier's variables decide; the others are reported, once,
     * and change nothing here (issue 56 item 6) */
    if (ts_environment_check(false, TS_ENV_BARRIER) < 0) {
        glibc.environment_bad = 1;
        fprintf(stderr, "libtopsync-pthread: %s; pthread barriers use glibc's implementation\n",
                topsync_error_message());
    }
    if (ts_environment_check(false, TS_ENV_ALL & ~TS_ENV_BARRIER) < 0)
        fprintf(stderr, "libtopsync-pthread: warning: %s (not used by pthread barriers)\n",
                topsync_error_message());
    glibc.verbose = ts_env_verbose();
    if (glibc.verbose < 0) {
        fprintf(stderr,
                "libtopsync-pthread: warning: TOPSYNC_VERBOSE='%s' is not valid; valid: 0 "
                "(silent), 1 (a start line and a summary at exit), 2 (a line per barrier); "
                "taken as 0\n",
                getenv("TOPSYNC_VERBOSE"));
        glibc.verbose = 0;
    }
}

/* TOPSYNC_VERBOSE: how many barriers each implementation got (relaxed:
 * counters read at exit, after the program's threads are done) */
static _Atomic unsigned long served_ours, served_glibc;

/* The summary at exit (TOPSYNC_VERBOSE >= 1), when a barrier was made. */
__attribute__((destructor)) static void say_summary(void)
{
    unsigned long ours = atomic_load_explicit(&served_ours, memory_order_relaxed);
    unsigned long theirs = atomic_load_explicit(&served_glibc, memory_order_relaxed);
    if (glibc.verbose >= 1 && ours + theirs > 0)
        fprintf(stderr,
                "libtopsync-pthread: summary: %lu pthread barrier%s topsync's, %lu glibc's%s\n",
                ours, ours == 1 ? "" : "s", theirs,
                theirs && glibc.verbose < 2 ? " (TOPSYNC_VERBOSE=2 says why)" : "");
}

/* The first barrier topsync serves says so (TOPSYNC_VERBOSE=1); each one
 * does with 2. */
static void say_served(const struct ts_pthread_barrier *s, unsigned count)
{
    unsigned long n = atomic_fetch_add_explicit(&served_ours, 1, memory_order_relaxed);
    if (glibc.verbose >= 2)
        fprintf(stderr, "libtopsync-pthread: pthread_barrier_init(count %u): %s, wait %s; %s\n",
                count, topsync_barrier_algorithm(s->instance[0]),
                topsync_barrier_wait_policy_name(s->instance[0]),
                topsync_barrier_explain(s->instance[0]));
    else if (glibc.verbose == 1 && n == 0)
        fprintf(stderr,
                "libtopsync-pthread %s: pthread barriers are topsync's (the first: count %u, "
                "%s, wait %s); a summary at exit, TOPSYNC_VERBOSE=2 for each barrier\n",
                topsync_version(), count, topsync_barrier_algorithm(s->instance[0]),
                topsync_barrier_wait_policy_name(s->instance[0]));
}

static struct ts_pthread_handle *handle(pthread_barrier_t *b)
{
    return (struct ts_pthread_handle *)(void *)b;
}

static uint64_t check_word(const pthread_barrier_t *b, const struct ts_pthread_barrier *s)
{
    return (uint64_t)(uintptr_t)s ^ (uint64_t)(uintptr_t)b ^ TS_PTHREAD_MAGIC;
}

enum ts_handle_kind { TS_HANDLE_GLIBC, TS_HANDLE_OURS, TS_HANDLE_INVALID };

static _Noreturn void handle_abort(pthread_barrier_t *b, const char *what)
{
    fprintf(stderr, "libtopsync-pthread: the pthread_barrier_t at %p %s; aborting\n", (void *)b,
            what);
    abort();
}

/*
 * Whose barrier this is. Ours: the mark at byte 8 and a check word that is
 * the state pointer xor the handle's own address xor a magic constant, so
 * that a copy (another address) is told from the original. glibc's: check
 * word 0 (our init clears it when it hands a barrier to glibc) and a count
 * glibc set. A zero count is a barrier nobody initialized (static storage):
 * EINVAL, where glibc would divide by it. What was ours but no longer
 * matches was copied or overwritten by the program (as glibc's white-box
 * tests write its private fields): that aborts with a message saying
 * which, rather than run a barrier on memory of unknown meaning. Destroyed
 * barriers are ours here: the ticket word says destroyed (callers check).
 */
static enum ts_handle_kind handle_kind(pthread_barrier_t *b, struct ts_pthread_barrier **state)
{
    struct ts_pthread_handle *h = handle(b);
    *state = NULL;
    if (h->mark == TS_PTHREAD_MARK) {
        if (h->state && h->check == check_word(b, h->state)) {
            *state = h->state;
            return TS_HANDLE_OURS;
        }
        if (h->check == 0)
            handle_abort(b, "is corrupted: the program overwrote its bytes 24..31 (topsync's "
                            "check word) after pthread_barrier_init");
        uintptr_t original =
            (uintptr_t)(h->check ^ (uint64_t)(uintptr_t)h->state ^ TS_PTHREAD_MAGIC);
        if (h->state && original && original % _Alignof(pthread_barrier_t) == 0) {
            char what[160];
            snprintf(what, sizeof what,
                     "is a copy of the barrier initialized at %p (POSIX: only the "
                     "initialized object may be used), or was overwritten",
                     (void *)original);
            handle_abort(b, what);
        }
        handle_abort(b, "is corrupted: its state pointer no longer matches its check word "
                        "(did the program write into the barrier?)");
    }
    if (h->check == 0) {
        pthread_once(&glibc_once, glibc_resolve);
        uint32_t count;
        memcpy(&count, (unsigned char *)b + 8, sizeof count);
        if (glibc.count_at_8 && count == 0)
            return TS_HANDLE_INVALID;
        return TS_HANDLE_GLIBC;
    }
    handle_abort(b, "is corrupted: neither topsync nor glibc initialized it as it is now "
                    "(did the program write into the barrier, or copy it?)");
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
    /* auto's stand-in reacts as auto's own choice would: its robust
     * configuration (sense-reversing) is one the last arrival completes */
    if (o.algorithm && !strcmp(o.algorithm, "combining-tree") &&
        (ts_barrier_make_reactive(first, &o) < 0 || ts_barrier_make_reactive(second, &o) < 0)) {
        topsync_barrier_destroy(first);
        topsync_barrier_destroy(second);
        return ENOMEM;
    }
    /* a timeout then counts the threads missing instead of naming ranks */
    first->ranks_by_arrival = second->ranks_by_arrival = true;
    size_t line = first->line;
    size_t bytes =
        sizeof(struct ts_pthread_barrier) + line + (size_t)2 * n * line + line /* alignment */;
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
    /* the gates start after the line(s) of the state itself */
    size_t header = (sizeof *s + line - 1) / line * line;
    s->gates = (unsigned char *)at + header;
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
    int ours = pshared == PTHREAD_PROCESS_PRIVATE && !glibc.environment_bad;
    if (ours && state_create(&s, count) != 0) {
        /* said, not silent: the program keeps working on glibc's barrier,
         * but the user asked for topsync (once: a program may make many) */
        static atomic_flag said = ATOMIC_FLAG_INIT;
        /* relaxed: only which thread prints is decided here */
        if (!atomic_flag_test_and_set_explicit(&said, memory_order_relaxed)) {
            const char *why = topsync_error_message();
            fprintf(stderr,
                    "libtopsync-pthread: pthread_barrier_init(count %u): %s; this barrier, "
                    "and any other topsync cannot set up, runs on glibc's implementation "
                    "(said once)\n",
                    count, why && *why ? why : "out of memory");
        }
        ours = 0;
    }
    if (ours) {
        say_served(s, count);
        struct ts_pthread_handle *h = handle(barrier);
        memset(barrier, 0, sizeof *barrier);
        h->state = s;
        h->mark = TS_PTHREAD_MARK;
        /* relaxed: POSIX orders init before every use of the barrier */
        atomic_store_explicit(&h->tickets, 0, memory_order_relaxed);
        h->check = check_word(barrier, s);
        return 0;
    }
    if (!glibc.init)
        return ENOMEM;
    int rc = glibc.init(barrier, attr, count);
    if (rc == 0) {
        handle(barrier)->check = 0; /* glibc's now, whatever was there before */
        atomic_fetch_add_explicit(&served_glibc, 1, memory_order_relaxed);
        if (glibc.verbose >= 2)
            fprintf(stderr, "libtopsync-pthread: pthread_barrier_init(count %u): glibc's, %s\n",
                    count,
                    pshared != PTHREAD_PROCESS_PRIVATE ? "process-shared (topsync serves "
                                                         "private barriers)"
                    : glibc.environment_bad            ? "for a bad barrier variable (said above)"
                                            : "topsync could not set it up (said above)");
    }
    return rc;
}

int topsync_pthread_barrier_wait(pthread_barrier_t *barrier)
{
    struct ts_pthread_barrier *s = NULL;
    enum ts_handle_kind kind = barrier ? handle_kind(barrier, &s) : TS_HANDLE_INVALID;
    if (kind == TS_HANDLE_INVALID)
        return EINVAL;
    if (kind == TS_HANDLE_GLIBC)
        return glibc.wait ? glibc.wait(barrier) : EINVAL;
    /* relaxed: the ticket only names a slot; ordering comes from the gate
     * (acquire below) and the instance's own barrier. Atomic against
     * destroy's claim (compare-exchange on this word): a ticket drawn before
     * it is counted there, one drawn after it carries the destroyed bit, and
     * the increment below that bit is never read again. */
    uint64_t ticket = atomic_fetch_add_explicit(&handle(barrier)->tickets, 1, memory_order_relaxed);
    if (ticket & TS_PTHREAD_DESTROYED)
        return EINVAL; /* a wait after destroy: the state is gone, untouched */
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

/*
 * Claims the ticket word for destroy: sets the destroyed bit if every
 * ticket drawn so far completed its episode. 0 with the tickets drawn in
 * *drawn; EBUSY when threads are blocked in an unfinished episode, or a
 * wait drew a ticket while destroy looked (the barrier is in use either
 * way; one attempt, no retry); EINVAL when destroyed already. Relaxed: it
 * is the single word's modification order that makes a wait's fetch-add
 * and this compare-exchange exclusive; the ordering with the threads
 * leaving comes from the gates.
 */
static int claim_for_destroy(struct ts_pthread_handle *h, const struct ts_pthread_barrier *s,
                             uint64_t *drawn)
{
    uint64_t tickets = atomic_load_explicit(&h->tickets, memory_order_relaxed);
    if (tickets & TS_PTHREAD_DESTROYED)
        return EINVAL; /* the state is freed: not read */
    if (tickets % s->n != 0)
        return EBUSY;
    *drawn = tickets;
    if (!atomic_compare_exchange_strong_explicit(&h->tickets, &tickets,
                                                 tickets | TS_PTHREAD_DESTROYED,
                                                 memory_order_relaxed, memory_order_relaxed))
        return tickets & TS_PTHREAD_DESTROYED ? EINVAL : EBUSY;
    return 0;
}

int topsync_pthread_barrier_destroy(pthread_barrier_t *barrier)
{
    struct ts_pthread_barrier *s = NULL;
    enum ts_handle_kind kind = barrier ? handle_kind(barrier, &s) : TS_HANDLE_INVALID;
    if (kind == TS_HANDLE_INVALID)
        return EINVAL;
    if (kind == TS_HANDLE_GLIBC)
        return glibc.destroy ? glibc.destroy(barrier) : EINVAL;
    uint64_t tickets = 0;
    int rc = claim_for_destroy(handle(barrier), s, &tickets);
    if (rc != 0)
        return rc;
    uint64_t episodes = tickets / s->n;
    for (unsigned instance = 0; instance < 2; instance++) {
        uint32_t uses = (uint32_t)((episodes + 1 - instance) / 2);
        for (unsigned r = 0; r < s->n; r++)
            /* acquire: pairs with the leaver's release publish; it is out */
            ts_wait_reach(gate(s, instance, r), uses, &s->gate_policy);
    }
    /* the handle keeps its (now dangling) state pointer and check word:
     * the destroyed bit makes a late wait or destroy EINVAL before either
     * is read, and a copy is still told from the original */
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

/* Which implementation runs a barrier: "topsync:ALGORITHM/WAIT", "glibc",
 * or "invalid" (never initialized, or destroyed). */
const char *topsync_pthread_barrier_implementation(pthread_barrier_t *barrier)
{
    struct ts_pthread_barrier *s = NULL;
    enum ts_handle_kind kind = barrier ? handle_kind(barrier, &s) : TS_HANDLE_INVALID;
    if (kind == TS_HANDLE_GLIBC)
        return "glibc";
    /* relaxed: a query, ordered with destroy only by the program */
    if (kind == TS_HANDLE_INVALID ||
        (atomic_load_explicit(&handle(barrier)->tickets, memory_order_relaxed) &
         TS_PTHREAD_DESTROYED))
        return "invalid";
    static _Thread_local char name[160];
    snprintf(name, sizeof name, "topsync:%s/%s", topsync_barrier_algorithm(s->instance[0]),
             topsync_barrier_wait_policy_name(s->instance[0]));
    return name;
}
