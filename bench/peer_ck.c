#define _POSIX_C_SOURCE 200809L
/*
 * Concurrency Kit peers: ck_barrier_{centralized,combining,dissemination,
 * tournament,mcs}, used exactly as CK's own regressions/ck_barrier
 * benchmarks use them (per-thread state subscribed once, then a wait loop).
 * All of them spin: they never give the CPU up.
 */
#include <stdlib.h>

#include "bench.h"

#ifdef TOPSYNC_HAVE_CK
#include <ck_barrier.h>

struct ck_state {
    unsigned n;
    void *barrier;
    void *extra;         /* flags, rounds or groups */
    void *thread_states; /* one per rank, each on its own line */
};

#define CK_LINE 128
#define STATE(s, r, type) ((type *)((char *)(s)->thread_states + (size_t)(r)*CK_LINE))

static struct ck_state *alloc_state(unsigned n)
{
    struct ck_state *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->n = n;
    if (posix_memalign(&s->thread_states, CK_LINE, (size_t)n * CK_LINE)) {
        free(s);
        return NULL;
    }
    return s;
}

static void destroy_generic(void *p)
{
    struct ck_state *s = p;
    free(s->barrier);
    free(s->extra);
    free(s->thread_states);
    free(s);
}

/* centralized */
static void *centralized_create(unsigned n, const void *arg)
{
    (void)arg;
    struct ck_state *s = alloc_state(n);
    if (!s || posix_memalign(&s->barrier, CK_LINE, sizeof(ck_barrier_centralized_t)))
        return NULL;
    *(ck_barrier_centralized_t *)s->barrier =
        (ck_barrier_centralized_t)CK_BARRIER_CENTRALIZED_INITIALIZER;
    for (unsigned r = 0; r < n; r++)
        *STATE(s, r, ck_barrier_centralized_state_t) =
            (ck_barrier_centralized_state_t)CK_BARRIER_CENTRALIZED_STATE_INITIALIZER;
    return s;
}
static void centralized_wait(void *p, unsigned r)
{
    struct ck_state *s = p;
    ck_barrier_centralized(s->barrier, STATE(s, r, ck_barrier_centralized_state_t), s->n);
}

/* combining: one group of n threads, as CK's benchmark does */
struct combining {
    ck_barrier_combining_t barrier;
    ck_barrier_combining_group_t root;
    ck_barrier_combining_group_t group;
};
static void *combining_create(unsigned n, const void *arg)
{
    (void)arg;
    struct ck_state *s = alloc_state(n);
    if (!s || posix_memalign(&s->barrier, CK_LINE, sizeof(struct combining)))
        return NULL;
    struct combining *c = s->barrier;
    ck_barrier_combining_init(&c->barrier, &c->root);
    ck_barrier_combining_group_init(&c->barrier, &c->group, n);
    for (unsigned r = 0; r < n; r++)
        *STATE(s, r, ck_barrier_combining_state_t) =
            (ck_barrier_combining_state_t)CK_BARRIER_COMBINING_STATE_INITIALIZER;
    return s;
}
static void combining_wait(void *p, unsigned r)
{
    struct ck_state *s = p;
    struct combining *c = s->barrier;
    ck_barrier_combining(&c->barrier, &c->group, STATE(s, r, ck_barrier_combining_state_t));
}

/* dissemination */
static void *dissemination_create(unsigned n, const void *arg)
{
    (void)arg;
    struct ck_state *s = alloc_state(n);
    if (!s)
        return NULL;
    unsigned size = ck_barrier_dissemination_size(n);
    ck_barrier_dissemination_flag_t **flags = calloc(n, sizeof *flags);
    s->extra = flags;
    s->barrier = calloc(n, sizeof(ck_barrier_dissemination_t)); /* one per thread */
    if (!flags || !s->barrier)
        return NULL;
    for (unsigned r = 0; r < n; r++)
        flags[r] = calloc(size, sizeof(ck_barrier_dissemination_flag_t));
    ck_barrier_dissemination_init(s->barrier, flags, n);
    for (unsigned r = 0; r < n; r++)
        ck_barrier_dissemination_subscribe(s->barrier,
                                           STATE(s, r, ck_barrier_dissemination_state_t));
    return s;
}
static void dissemination_wait(void *p, unsigned r)
{
    struct ck_state *s = p;
    ck_barrier_dissemination(s->barrier, STATE(s, r, ck_barrier_dissemination_state_t));
}
static void dissemination_destroy(void *p)
{
    struct ck_state *s = p;
    ck_barrier_dissemination_flag_t **flags = s->extra;
    for (unsigned r = 0; r < s->n; r++)
        free(flags[r]);
    destroy_generic(p);
}

/* tournament */
static void *tournament_create(unsigned n, const void *arg)
{
    (void)arg;
    struct ck_state *s = alloc_state(n);
    if (!s)
        return NULL;
    unsigned size = ck_barrier_tournament_size(n);
    ck_barrier_tournament_round_t **rounds = calloc(n, sizeof *rounds);
    s->extra = rounds;
    s->barrier = calloc(1, sizeof(ck_barrier_tournament_t));
    if (!rounds || !s->barrier)
        return NULL;
    for (unsigned r = 0; r < n; r++)
        rounds[r] = calloc(size, sizeof(ck_barrier_tournament_round_t));
    ck_barrier_tournament_init(s->barrier, rounds, n);
    for (unsigned r = 0; r < n; r++)
        ck_barrier_tournament_subscribe(s->barrier, STATE(s, r, ck_barrier_tournament_state_t));
    return s;
}
static void tournament_wait(void *p, unsigned r)
{
    struct ck_state *s = p;
    ck_barrier_tournament(s->barrier, STATE(s, r, ck_barrier_tournament_state_t));
}
static void tournament_destroy(void *p)
{
    struct ck_state *s = p;
    ck_barrier_tournament_round_t **rounds = s->extra;
    for (unsigned r = 0; r < s->n; r++)
        free(rounds[r]);
    destroy_generic(p);
}

/* mcs */
static void *mcs_create(unsigned n, const void *arg)
{
    (void)arg;
    struct ck_state *s = alloc_state(n);
    if (!s)
        return NULL;
    s->barrier = calloc(n, sizeof(ck_barrier_mcs_t));
    if (!s->barrier)
        return NULL;
    ck_barrier_mcs_init(s->barrier, n);
    for (unsigned r = 0; r < n; r++)
        ck_barrier_mcs_subscribe(s->barrier, STATE(s, r, ck_barrier_mcs_state_t));
    return s;
}
static void mcs_wait(void *p, unsigned r)
{
    struct ck_state *s = p;
    ck_barrier_mcs(s->barrier, STATE(s, r, ck_barrier_mcs_state_t));
}

static const bench_barrier ck_peers[] = {
    {"peer:ck-centralized", "spin", centralized_create, centralized_wait, destroy_generic, NULL, 1},
    {"peer:ck-combining", "spin", combining_create, combining_wait, destroy_generic, NULL, 1},
    {"peer:ck-dissemination", "spin", dissemination_create, dissemination_wait,
     dissemination_destroy, NULL, 1},
    {"peer:ck-tournament", "spin", tournament_create, tournament_wait, tournament_destroy, NULL, 1},
    {"peer:ck-mcs", "spin", mcs_create, mcs_wait, destroy_generic, NULL, 1},
};

int bench_ck_peers(const bench_barrier **out)
{
    *out = ck_peers;
    return (int)(sizeof ck_peers / sizeof ck_peers[0]);
}
#else
int bench_ck_peers(const bench_barrier **out)
{
    *out = NULL;
    return 0;
}
#endif
