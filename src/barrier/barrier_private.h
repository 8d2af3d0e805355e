/*
 * Private: the barrier object, its shared segment, and the interface every
 * algorithm file (src/barrier/algorithms/NAME.c) implements.
 * The why: docs/design.md section 8.12.
 */
#ifndef TOPSYNC_SRC_BARRIER_PRIVATE_H
#define TOPSYNC_SRC_BARRIER_PRIVATE_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <topsync/barrier.h>
#include <topsync/groups.h>
#include <topsync/model.h>

#include "barrier/algorithms/list.h"
#include "base/registry.h"
#include "wait/wait.h"

/* An algorithm's object: ts_algo_STEM, or the simulator's copy. */
#ifndef TS_ALGO
#define TS_ALGO(stem) ts_algo_##stem
#endif

/* topo's lines that the collectives also carry data on (after the first
 * word): a member's arrival line, and the global release line. */
#define TS_TOPO_LINE_ARRIVAL 1
#define TS_TOPO_GLOBAL_LINE_RELEASE 1

#define TS_MIN_LINE 32 /* the MCS arrival line holds four 8-byte child words */
#define TS_MAX_LINE 1024

typedef struct ts_algorithm ts_algorithm;

#define TS_BARRIER_LIVE 0x54534252u /* "TSBR" */
#define TS_BARRIER_DEAD 0xdead0002u

struct topsync_barrier {
    uint32_t magic;          /* TS_BARRIER_LIVE; TS_BARRIER_DEAD once destroyed */
    ts_registry_link_t live; /* in the live barriers (barrier.c), for set-up calls */
    const ts_algorithm *algo;
    unsigned n;
    ts_wait wait;
    char name[96];

    /* segment */
    unsigned char *base;
    size_t size;
    size_t line;        /* bytes per line */
    size_t block_bytes; /* global block and every rank block */
    bool owns_mapping;
    bool spare_segment; /* private and placed nowhere: kept for reuse (lifecycle.c) */

    /* topo options */
    unsigned level_mask;
    bool tree_release;
    topsync_groups_t *groups; /* owned copy for "topo" */

    void *roles;            /* per-rank roles, algorithm specific, read-only after setup */
    bool attached;          /* a process's part of a shared segment */
    char explain[1100];     /* how the algorithm was chosen (topsync_barrier_explain) */
    double timeout_seconds; /* 0: none */
    bool timeout_from_env;  /* set by TOPSYNC_TIMEOUT, not options.timeout_seconds */
    bool ranks_by_arrival;  /* ranks are drawn per episode (the pthread drop-in) */
    bool armed;             /* a timeout or an idle hook: waits unwind */
    _Atomic int broken_by;  /* 0, or TS_UNWIND_* of the first wait that broke it */
    /* The collectives' combine step (src/collectives/coll.c), NULL for a
     * plain barrier: topo calls it in a leader once all members of a group
     * it leads have arrived (after the acquire that pairs with their
     * arrivals), before the leader goes up or releases; `last`: the top
     * group, after which participant 0 publishes the release. */
    void (*gathered)(const topsync_barrier_t *b, unsigned leader, const unsigned *members,
                     unsigned nmembers, bool last);
    void *gathered_arg;
    /* The same step when the robust configuration of a reactive
     * collectives' barrier runs their episode (docs/design.md section
     * 10.5): sense-reversing calls it in the last arriver, after the
     * acquire of every arrival (the counter's release sequence), before it
     * publishes the release; NULL for a plain barrier. */
    void (*completed)(const topsync_barrier_t *b, unsigned rank);
    bool by_auto;                 /* the algorithm was auto's choice */
    char auto_candidate[96];      /* ts_auto_choice.candidate, "" when none */
    bool wait_given;              /* by the options or TOPSYNC_WAIT (setup.h, struct resolved) */
    struct ts_reactive *reactive; /* NULL: one configuration (reactive.h) */
    uint64_t reacts_as;           /* attach: TOPSYNC_REACTIVE's mode and N, in the fingerprint */
};

struct ts_algorithm {
    const char *name;
    /* Lines needed in the global block and in every rank block (including
     * line 0): a fixed count, or a function of n when the function is set. */
    unsigned global_lines_fixed, rank_lines_fixed;
    unsigned (*global_lines)(const topsync_barrier_t *b);
    unsigned (*rank_lines)(const topsync_barrier_t *b);
    /* Compute roles (b->base is mapped); NULL when the algorithm has none.
     * Returns 0 or a negative errno. */
    int (*setup)(topsync_barrier_t *b);
    /* Reset the arrival counters of a rank's block (rank) or of the global
     * block (rank == -1) to their quiescent value; NULL when there are none. */
    void (*reset_counters)(topsync_barrier_t *b, int rank);
    /* Enter episode `episode` as `rank`. */
    void (*wait)(topsync_barrier_t *b, unsigned rank, uint32_t episode);
    /* The participant whose publish ends rank's wait in the release phase
     * (for the timeout report, when everybody arrived but rank was never
     * released); -1 or NULL when no single one does. */
    int (*releaser)(const topsync_barrier_t *b, unsigned rank);
    /* Free b->roles; NULL means free(b->roles). */
    void (*free_roles)(topsync_barrier_t *b);
};

static inline unsigned ts_algo_global_lines(const topsync_barrier_t *b)
{
    return b->algo->global_lines ? b->algo->global_lines(b) : b->algo->global_lines_fixed;
}

static inline unsigned ts_algo_rank_lines(const topsync_barrier_t *b)
{
    return b->algo->rank_lines ? b->algo->rank_lines(b) : b->algo->rank_lines_fixed;
}

static inline ts_word *ts_global_line(const topsync_barrier_t *b, unsigned line)
{
    return (ts_word *)(b->base + (size_t)line * b->line);
}

static inline ts_word *ts_rank_line(const topsync_barrier_t *b, unsigned rank, unsigned line)
{
    return (ts_word *)(b->base + (size_t)(rank + 1) * b->block_bytes + (size_t)line * b->line);
}

/* Before a wait on b's words as participant `rank` (every barrier wait,
 * and the collectives' one-way waits): the thread's wait context, i.e.
 * where the wait policy keeps what it learns (words 1..3 of the rank's
 * line 0, wait.h) and, for the co-location check, this participant's CPU. */
static inline void ts_barrier_wait_as(const topsync_barrier_t *b, unsigned rank)
{
    ts_word *local = ts_rank_line(b, rank, 0);
    ts_wait_learned = b->wait.learn ? local + 1 : NULL;
    if (b->wait.colocation) {
        int cpu = sched_getcpu();
        uint32_t seen = cpu < 0 ? 0u : (uint32_t)cpu + 1;
        ts_wait_rank = rank;
        /* relaxed: a hint for the other participants' spin (wait.h); stored
         * only when it changed, so that the line the others read in their
         * slow path stays shared while this thread keeps its CPU */
        if (atomic_load_explicit(&local->aux, memory_order_relaxed) != seen)
            atomic_store_explicit(&local->aux, seen, memory_order_relaxed);
    }
}

/* Ceil(log2(n)) for n >= 1. */
static inline unsigned ts_ceil_log2(unsigned n)
{
    unsigned k = 0;
    while ((1u << k) < n)
        k++;
    return k;
}

/* Every algorithm, in the order of ts_algorithms (barrier.c). */
#define TS_COUNT_ALGORITHM(stem, name) +1
#define TS_NALGORITHMS (0 TS_ALGORITHM_LIST(TS_COUNT_ALGORITHM))
extern const ts_algorithm *const ts_algorithms[TS_NALGORITHMS];

/*
 * topsync_barrier_create with the algorithms taken from `table`, an array
 * in the order of ts_algorithms: the simulator's copies of the same code
 * (src/model/sim_barrier.c); names and options resolve exactly as in
 * topsync_barrier_create, but "auto" predicts on `model` (the simulated
 * machine) and reads no tuning file. model NULL: this machine.
 */
/* What "auto" is asked and answers (src/select/auto.c answers). The
 * barrier's core lies below auto, which runs the simulator, which builds
 * barriers with this core: so the core calls auto only through the chooser
 * registered here, never by name (docs/design.md, "Layers"). */
struct ts_auto_request {
    unsigned n;
    const topsync_topology_t *topology;  /* NULL: unknown */
    const hwloc_const_bitmap_t *cpusets; /* NULL: nobody bound */
    const topsync_groups_t *groups;      /* over every level */
    bool oversubscribed;
    bool processes;
    topsync_wait_policy_t wait; /* the policy the barrier will run with */
    /* In a simulation: the simulated machine (the model step predicts on
     * it, and no tuning file of this machine applies). NULL: this machine. */
    const topsync_model_t *model;
};

struct ts_auto_choice {
    char algorithm[96];         /* a name topsync_barrier_create accepts */
    topsync_wait_policy_t wait; /* the tuned policy, or DEFAULT (none chosen) */
    char explain[1024];         /* which step chose, what, on which figures */
    /* When the rules chose (nothing measured or predicted decided): the
     * algorithm they set aside, for a reactive barrier to try online; ""
     * when none is worth trying. */
    char candidate[96];
};

struct ts_barrier_chooser {
    int (*check)(void); /* TOPSYNC_AUTO: 0, or -EINVAL with a message */
    void (*choose)(const struct ts_auto_request *request, struct ts_auto_choice *choice);
};
/* Set once, by select/auto.c's constructor, before any barrier is made.
 * Without one, "auto" is the rules' dissemination, and says so. */
void ts_barrier_set_chooser(const struct ts_barrier_chooser *chooser);

/* The barrier variables of topsync_environment_check (src/front/): 0, or
 * -EINVAL with a message; TOPSYNC_BARRIER=mpi is valid when
 * barrier_mpi_valid (the MPI library's "the MPI's own barrier"). */
int ts_barrier_environment_check(bool barrier_mpi_valid);

struct topsync_model;
/* topsync_barrier_attach without the check that the segment is mapped
 * read-write, for a caller that mapped it so itself (the MPI library: the
 * check reads /proc/self/maps, a set-up cost per communicator). */
int ts_barrier_attach_mapped(topsync_barrier_t **out, unsigned n,
                             const topsync_barrier_options_t *opts, void *segment, size_t size,
                             unsigned rank);

int ts_barrier_create_with(topsync_barrier_t **out, unsigned n,
                           const topsync_barrier_options_t *opts,
                           const ts_algorithm *const table[TS_NALGORITHMS],
                           const struct topsync_model *model);

/* Give b (made with a given algorithm) the robust configuration beside it,
 * as if auto had chosen its algorithm (lifecycle.c; TOPSYNC_REACTIVE
 * decides): the pthread drop-in's auto among the algorithms whose last
 * arrival completes an episode, before the first wait. 0 or -errno. */
int ts_barrier_make_reactive(topsync_barrier_t *b, const topsync_barrier_options_t *opts);

/*
 * The collectives' barrier (src/collectives/): a topo variant they give,
 * whose episodes carry data. Created, attached and sized as
 * topsync_barrier_create, ts_barrier_attach_mapped (check_mapping: as
 * topsync_barrier_attach) and topsync_barrier_segment_size, but it reacts
 * under TOPSYNC_REACTIVE although its algorithm was given, with the robust
 * configuration alone (docs/design.md section 10.5). 0 or -errno.
 */
int ts_barrier_create_carrier(topsync_barrier_t **out, unsigned n,
                              const topsync_barrier_options_t *opts);
int ts_barrier_attach_carrier(topsync_barrier_t **out, unsigned n,
                              const topsync_barrier_options_t *opts, void *segment, size_t size,
                              unsigned rank, bool check_mapping);
int ts_barrier_segment_size_carrier(unsigned n, const topsync_barrier_options_t *opts,
                                    size_t *size);

/* Give a carrier its combine step, before its first wait (lifecycle.c):
 * `gathered` to topo's leaders (b itself), `completed` to the last arriver
 * of each other configuration (the robust one), `arg` to both. */
void ts_barrier_carry(topsync_barrier_t *b,
                      void (*gathered)(const topsync_barrier_t *b, unsigned leader,
                                       const unsigned *members, unsigned nmembers, bool last),
                      void (*completed)(const topsync_barrier_t *b, unsigned rank), void *arg);

/* topo.c: every gathered call topo's leaders make in one episode of b (a
 * topo barrier), made by this thread in an order that respects the tree
 * (each member's subtree before its group): the same combinations on the
 * same operands, so the same result bit for bit. For the last arriver of
 * another configuration, after it acquired every arrival. */
void ts_topo_combine_all(const topsync_barrier_t *b);

/* The algorithm objects, one per file of src/barrier/algorithms/ (the
 * simulator's build renames them: model/sim_atomic.h). */
#define TS_DECLARE_ALGORITHM(stem, name) extern const ts_algorithm TS_ALGO(stem);
TS_ALGORITHM_LIST(TS_DECLARE_ALGORITHM)
#undef TS_DECLARE_ALGORITHM

#endif
