/*
 * topsync barriers: the hierarchical barrier of Kurnosov (2022) and the
 * classic shared-memory barriers it is measured against, for threads and for
 * processes, with one implementation.
 *
 * Participants are numbered 0..n-1 (ranks); each calls
 * topsync_barrier_wait(b, rank) with its own rank, never two at once with
 * the same rank.
 *
 * Memory ordering guarantee (every algorithm): all memory operations a
 * participant performed before its call to topsync_barrier_wait for episode
 * k happen before (C11 sense) every memory operation any participant
 * performs after its own call for episode k returns. In liburcu terms: the
 * wait is a release of everything before it, paired with an acquire by
 * everyone leaving the same episode.
 *
 * Threads: topsync_barrier_create() puts the shared state in ordinary memory.
 * Processes: set options.process_shared = 1 before fork(), or lay the state
 * in a shared segment of your own with topsync_barrier_segment_size() and
 * topsync_barrier_attach() (every process attaches, then they must all have
 * attached before the first wait, e.g. after an MPI barrier).
 */
#ifndef TOPSYNC_BARRIER_H
#define TOPSYNC_BARRIER_H

#include <stddef.h>
#include <stdint.h>
#include <topsync/common.h>
#include <topsync/groups.h>
#include <topsync/wait.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct topsync_barrier topsync_barrier_t;

typedef struct topsync_barrier_options {
    /*
     * Algorithm name (see topsync_barrier_algorithm_names()): "auto",
     * "sense-reversing", "sense-reversing-counter", "sense-reversing-gr",
     * "combining-tree", "mcs", "tournament", "dissemination", "topo",
     * "topo:LEVELS" (e.g. "topo:numa,socket"), optionally followed by
     * "/global" or "/tree" for the topo release mode ("topo:numa/tree").
     * NULL: $TOPSYNC_BARRIER, else "auto".
     */
    const char *algorithm;
    /* Wait policy; TOPSYNC_WAIT_DEFAULT reads $TOPSYNC_WAIT (spin|yield|block). */
    topsync_wait_policy_t wait;
    /*
     * Participants' binding cpusets (n entries) on `topology`, used by "topo"
     * to build its groups and by "auto" to choose; NULL means unknown (topo
     * then runs one flat group). Not retained after create/attach returns.
     */
    const topsync_topology_t *topology;
    const hwloc_const_bitmap_t *cpusets;
    /*
     * Ready-made groups for "topo" (overrides topology/cpusets, and its level
     * mask overrides the one in the name). Not retained.
     */
    const topsync_groups_t *groups;
    /* Non-zero: the state lives in a MAP_SHARED mapping inherited by fork(). */
    int process_shared;
    /* Cache line size in bytes (power of two, 32..1024: the MCS arrival line
     * holds four 8-byte words); 0: from hwloc. */
    size_t line_size;
    /* Episode counters start here (tests of counter wrap-around); usually 0. */
    uint64_t start_episode;
    /*
     * Liveness: a wait lasting longer than this many seconds fails (see
     * topsync_barrier_wait_checked) instead of hanging. 0: $TOPSYNC_TIMEOUT
     * (seconds, 0 or unset: no timeout); negative: no timeout.
     */
    double timeout_seconds;
    /*
     * Idle hook: while a wait is in its slow path (never on its fast path),
     * idle(idle_arg) is called from the waiting thread as soon as its spin
     * ends, then at intervals that double from about 1 us up to
     * idle_interval_seconds (0: 0.1). For work a runtime must keep doing
     * while its threads wait: the MPI library drives MPI's progress engine
     * with it, so that messages and one-sided operations that other ranks
     * wait on move on, and an MPI_Abort elsewhere reaches the waiters.
     * Returning TOPSYNC_IDLE_AGAIN (wait.h) asks to be called again about a
     * microsecond later (the interval starts over, and the waiter does not
     * sleep meanwhile); 0 lets the interval grow; any other non-zero value
     * abandons the wait: topsync_barrier_wait_checked returns -ECANCELED
     * and the barrier is broken (as after a timeout). NULL: no hook. The
     * hook runs inside the wait: it must not wait on this barrier.
     */
    int (*idle)(void *idle_arg);
    void *idle_arg;
    double idle_interval_seconds;
    /*
     * Runnable threads or processes, of this barrier and any other, that
     * share the CPUs these participants run on (for example every rank of
     * an MPI job on this node, when there are more of them than CPUs).
     * 0: n. When it exceeds those CPUs, the barrier is run as oversubscribed:
     * a waiter gives its CPU up at once instead of spinning, and "auto"
     * chooses the central counter. Two barriers of 2 participants each on 2
     * CPUs, run by 4 processes at once, are oversubscribed although each
     * alone is not.
     */
    unsigned cpu_sharers;
} topsync_barrier_options_t;

/* Fill `options` with defaults (everything from the environment). */
void topsync_barrier_options_init(topsync_barrier_options_t *options);

/* The most participants a barrier takes (2^24: beyond any machine's threads). */
#define TOPSYNC_BARRIER_MAX_PARTICIPANTS (1u << 24)

/*
 * Create a barrier for n participants (1 <= n <=
 * TOPSYNC_BARRIER_MAX_PARTICIPANTS). options may be NULL. Memory is
 * reserved for every participant but touched only as participants use it:
 * a page per participant when its block is placed on its NUMA node
 * (cpusets of this machine) or shared between processes, a few cache lines
 * otherwise. Returns 0 or a negative errno: -EINVAL (n out of range,
 * unknown algorithm or wait policy name, bad line size; see
 * topsync_error_message()), -ENOMEM.
 */
int topsync_barrier_create(topsync_barrier_t **out, unsigned n,
                           const topsync_barrier_options_t *options);

/*
 * Bytes of shared state the barrier needs for n participants with these
 * options (a multiple of the page size), for a segment of your own.
 */
int topsync_barrier_segment_size(unsigned n, const topsync_barrier_options_t *options,
                                 size_t *size);

/*
 * Attach participant `rank` of a process to a shared segment of at least
 * topsync_barrier_segment_size() bytes, page aligned and zero-filled when
 * created (ftruncate'd shm is). Every process passes the same n and options:
 * the first to attach records a fingerprint of them (n, algorithm, layout,
 * wait policy) in the segment, and a later one that differs is refused with
 * -EINVAL and a message instead of hanging in its first wait.
 * The call writes the rank's own block first (first-touch places it on the
 * rank's NUMA node) and rank 0 writes the global block: all ranks must have
 * returned from attach before any rank calls topsync_barrier_wait. The
 * segment stays the caller's; topsync_barrier_destroy does not unmap it.
 */
int topsync_barrier_attach(topsync_barrier_t **out, unsigned n,
                           const topsync_barrier_options_t *options, void *segment, size_t size,
                           unsigned rank);

/*
 * Wait until all n participants have called topsync_barrier_wait for this
 * episode. Memory ordering: see the top of this file. rank must be < n.
 */
void topsync_barrier_wait(topsync_barrier_t *barrier, unsigned rank);

/*
 * The same, with its arguments checked: returns 0, or -EINVAL for a NULL
 * barrier or a rank out of range (topsync_barrier_wait aborts with a message
 * on a bad rank, since it cannot return an error).
 *
 * With an idle hook that returned non-zero: -ECANCELED, the barrier broken.
 * With a timeout (options.timeout_seconds or TOPSYNC_TIMEOUT): -ETIMEDOUT
 * when the wait lasted longer, with a message naming the participants that
 * had not arrived ("topsync_barrier_wait: participant 0 waited more than
 * 0.5 s (TOPSYNC_TIMEOUT) in episode 100; participant(s) not arrived: 2, 5").
 * When all had arrived but this one was never released, the message says so
 * and names the participant that releases it where the algorithm has one
 * (tournament, mcs, topo): "... not arrived: none; all arrived, but
 * participant 2, which releases participant 3, did not release it (stopped
 * or killed after arriving?)". The barrier is
 * then broken (a participant died or hangs): every later wait on this
 * handle returns -EPIPE, and the handle should be destroyed.
 * topsync_barrier_wait prints the same message and aborts. The wait stays
 * free of clock reads until it leaves its fast path.
 */
int topsync_barrier_wait_checked(topsync_barrier_t *barrier, unsigned rank);

/*
 * Who has not arrived: the participants that have not yet entered the
 * episode `rank` is in (or last waited in). Writes up to max of them to out
 * (ascending) and returns how many there are. For reports after a timeout;
 * racy by nature while participants move on.
 */
int topsync_barrier_missing(const topsync_barrier_t *barrier, unsigned rank, unsigned *out,
                            unsigned max);

/* Destroy (no participant may be inside a wait). NULL is accepted; returns 0.
 * A destroyed handle stays recognisable until 1024 more were destroyed: a
 * second destroy, or topsync_barrier_wait_checked on it, returns -EINVAL
 * with a message ("was destroyed"), and topsync_barrier_wait prints it and
 * aborts, as it does for a NULL barrier or a rank out of range. */
int topsync_barrier_destroy(topsync_barrier_t *barrier);

/* The resolved algorithm ("topo:numa,socket/global", ...) and wait policy. */
const char *topsync_barrier_algorithm(const topsync_barrier_t *barrier);
/*
 * How the algorithm was chosen, one line: "given: options.algorithm" or
 * "given: TOPSYNC_BARRIER", or for "auto" the step that chose and the
 * figures it chose on, e.g. "auto: tuning file F, entry 8 processes,
 * oversubscribed, placement unbound: sense-reversing/block 3100 ns, ...",
 * "auto: model (per-level default latencies): predicted combining-tree
 * 880 ns, ...", "auto: rules: topo, since ...".
 */
const char *topsync_barrier_explain(const topsync_barrier_t *barrier);
const char *topsync_barrier_wait_policy_name(const topsync_barrier_t *barrier);
unsigned topsync_barrier_nparticipants(const topsync_barrier_t *barrier);
/*
 * Reactive barriers (TOPSYNC_REACTIVE, on by default for "auto"): the
 * barrier runs each episode on its chosen configuration (the algorithm and
 * wait policy above) or on a robust one for a busy node (sense-reversing,
 * block), and moves every participant to the other at one agreed episode
 * when it measured the other faster; the memory ordering guarantee above
 * holds across a switch. A barrier this process creates (or attaches to
 * as rank 0) starts on the configuration its last barrier of the same
 * shape (participants, threads or processes, configurations) settled on;
 * topsync_barrier_explain says so. Returns how many times it moved (0 for a barrier
 * that never does: a given algorithm, TOPSYNC_REACTIVE=off). Racy by
 * nature while participants move on; in processes, counted in the shared
 * state.
 */
uint64_t topsync_barrier_switches(const topsync_barrier_t *barrier);
/* The groups "topo" runs on (NULL for other algorithms). */
const topsync_groups_t *topsync_barrier_groups(const topsync_barrier_t *barrier);

/* NULL-terminated list of the algorithm names (base names, without options). */
const char *const *topsync_barrier_algorithm_names(void);

/* Validate an algorithm name (with its options) without creating anything. */
int topsync_barrier_algorithm_validate(const char *name);

/*
 * Validate TOPSYNC_BARRIER, TOPSYNC_WAIT, TOPSYNC_SPIN, TOPSYNC_POLL,
 * TOPSYNC_TIMEOUT, TOPSYNC_REACTIVE,
 * TOPSYNC_AUTO, TOPSYNC_COLL_MAX_BYTES and TOPSYNC_RCL_PLACEMENT as
 * topsync_barrier_create(), topsync_coll_create() and
 * topsync_rcl_runtime_create() would read them: 0, or -EINVAL with a message
 * that names the variable and lists the valid values. For every variable an
 * empty value is the same as unset, and a value with surrounding spaces is
 * invalid.
 */
int topsync_environment_check(void);

#ifdef __cplusplus
}
#endif

#endif /* TOPSYNC_BARRIER_H */
